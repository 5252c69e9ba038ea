#!/bin/sh
# The layering DEVELOPERS.md promises, checked on what the linker sees:
# the library's packages import no tooling (benchmarks, the CLI's bench
# packages, the test kit), and the CLI binary does not link package testing.
set -eu
cd "$(dirname "$0")/.."
mod=github.com/ziplinekv/zipline
lib=$(go list ./... | grep -v -e "^$mod/cmd/" -e "^$mod/internal/testkit" -e "^$mod/internal/localserver")
bad=$(go list -deps $lib | grep -e "^$mod/cmd/" -e "^$mod/internal/testkit" -e "^$mod/internal/localserver" -e '^testing$' || true)
if [ -n "$bad" ]; then
	echo "check-layers: the library links tooling:" >&2
	echo "$bad" >&2
	exit 1
fi
if go list -deps ./cmd/zipline | grep -qx -e testing -e "$mod/internal/testkit"; then
	echo "check-layers: cmd/zipline links package testing or the test kit" >&2
	exit 1
fi
echo "check-layers: ok (library: $(echo "$lib" | wc -l) packages, no tooling; the CLI links no testing)"
