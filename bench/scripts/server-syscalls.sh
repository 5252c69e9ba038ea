#!/bin/bash
# server-syscalls.sh: how many GETs a redis-server read and write system call
# carried, and the server's CPU per GET, for each client at CONC goroutines
# (default 512): the profile behind bench/RESULTS.md section 1's c=512 note.
#
#   cd bench && [CONC=n] scripts/server-syscalls.sh [ROUNDS] [VALUE_SIZE] [CLIENTS]
#
# It starts one redis-server on a free loopback port (persistence off), runs
# clientbench against it one client at a time (interleaved over ROUNDS), and
# reads the server's /proc/PID/io (syscr, syscw), /proc/PID/stat (CPU) and
# INFO commandstats before and after each run. Stops the server by PID.
set -euo pipefail
rounds=${1:-3}
size=${2:-64}
clients=${3:-zipline redispipe redispipe-nopause rueidis}
conc=${CONC:-512}
cd "$(dirname "$0")/.."
cb=$(mktemp -d)/clientbench
go build -o "$cb" ./cmd/clientbench
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --logfile '' >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$(dirname "$cb")"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
io() { awk '/^syscr/{r=$2} /^syscw/{w=$2} END{print r, w}' "/proc/$pid/io"; }
gets() { redis-cli -p "$port" info commandstats | awk -F'[=,:]' '/^cmdstat_get:/{print $3}'; }
ticks() { awk '{print $14+$15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
for r in $(seq "$rounds"); do
	for c in $clients; do
		read -r r0 w0 <<<"$(io)"
		g0=$(gets); g0=${g0:-0}; t0=$(ticks)
		line=$("$cb" -addr "127.0.0.1:$port" -server-pid "$pid" -clients "$c" -conc "$conc" -ops get -sizes "$size" \
			-runs 1 -duration 2s -ceiling=false -max-other 0 2>&1 | grep -E '^\[run' | tail -1)
		read -r r1 w1 <<<"$(io)"
		g1=$(gets); t1=$(ticks)
		kops=$(awk '{for (i = 1; i <= NF; i++) if ($i == "kops/s") print $(i-1)}' <<<"$line")
		client=$(awk '{for (i = 1; i <= NF; i++) if ($i == "client") print $(i+1)}' <<<"$line")
		awk -v r="$r" -v c="$c" -v k="$kops" -v n=$((g1 - g0)) -v rd=$((r1 - r0)) -v wr=$((w1 - w0)) \
			-v t=$((t1 - t0)) -v hz="$hz" -v cl="$client" 'BEGIN {
			printf "round %d %-18s %5s kops/s  GETs per server read %6.1f, per write %6.1f  server CPU %.2f µs/GET  client CPU %s/GET\n",
				r, c, k, n / rd, n / wr, t * 1e6 / hz / n, cl }'
	done
done
