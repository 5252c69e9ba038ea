#!/bin/sh
# The layering DEVELOPERS.md promises, checked on what the compiler and the
# linker see:
#   1. the library module holds no tooling: no benchmark or CLI packages, and
#      the CLI and the test bed are modules of their own;
#   2. the library's packages link no tooling (the test bed, the test kit,
#      package testing), and the CLI binary does not link package testing;
#   3. the seam holds: no type switch or assertion on a carrier outside the
#      carriers' own files, bar the one named fast path (fastDirect);
#   4. internal/pipe is imported only by the carriers (and a server's solo
#      connections and bulk lane), request encoding, the subscriber
#      connection, the client cache, the stats (which read the connections'
#      counters) and the credentials' renewal (which authenticates the
#      pipes' connections again).
set -eu
cd "$(dirname "$0")/.."
mod=github.com/ziplinekv/zipline
fail() {
	echo "check-layers: $*" >&2
	exit 1
}

# 1. Modules.
for m in cmd/zipline testbed bench otel; do
	[ -f "$m/go.mod" ] || fail "$m is not a module of its own (no $m/go.mod)"
done
all=$(go list ./...)
tooling=$(echo "$all" | grep -E "^$mod/(cmd|bench|testbed)(/|$)|/bench(/|$)" || true)
[ -z "$tooling" ] || fail "the library module holds tooling packages:
$tooling"

# 2. What the library and the CLI link.
lib=$(echo "$all" | grep -v -e "^$mod/internal/testkit$" -e "^$mod/internal/cmdspec/fetch$" -e "^$mod/internal/cmdspec/gen$" -e "^$mod/internal/release$")
bad=$(go list -deps $lib | grep -e "^$mod/testbed" -e "^$mod/cmd/" -e "^$mod/internal/testkit" -e '^testing$' || true)
[ -z "$bad" ] || fail "the library links tooling:
$bad"
if go -C cmd/zipline list -deps . | grep -qx -e testing -e "$mod/internal/testkit" -e "$mod/testbed/servertest"; then
	fail "cmd/zipline links package testing or the test kit"
fi

# 3. The seam. The carriers' own files may name their types; anywhere else
# in the root package, asking which carrier one holds is refused, and in
# the carriers' files too, outside fastDirect (carrier.go).
# The carriers are the types asserted to be one (var _ carrier = (*T)(nil)).
carriers=$(sed -n 's/^var _ carrier = (\*\([A-Za-z]*\))(nil)$/\1/p' *.go | sort -u | paste -sd '|' -)
[ -n "$carriers" ] || fail "no carrier found: no 'var _ carrier = (*T)(nil)' in the root package"
own='^(carrier|direct|lease|cluster|cluster_[a-z]+|sentinel|sentinel_[a-z]+|lazyconnect)\.go$'
pattern="\.\((\*)?($carriers)\)|case \*($carriers)[,:]"
leaks=$(for f in *.go; do
	case "$f" in *_test.go) continue ;; esac
	if echo "$f" | grep -qE "$own"; then
		# fastDirect, the one named fast path, may ask.
		awk -v f="$f" '/^func fastDirect\(/ { skip = 1 } skip && /^}/ { skip = 0; next } !skip { print f ":" FNR ":" $0 }' "$f" |
			grep -E "$pattern" | grep -v "var _ carrier" || true
		continue
	fi
	grep -nE "$pattern" "$f" | grep -v "var _ carrier" | sed "s|^|$f:|" || true
done)
[ -z "$leaks" ] || fail "a type switch or assertion on a carrier outside fastDirect:
$leaks"

# 4. internal/pipe's importers.
allowed='bulk.go carrier.go clientcache.go connect.go credentials.go dial.go direct.go encoder.go lease.go request.go sentinel.go sentinel_watch.go sidedial.go solo.go stats.go subscriber.go'
pipes=$(grep -l "\"$mod/internal/pipe\"" $(go list -f '{{range .GoFiles}}{{$.Dir}}/{{.}} {{end}}' $lib) | sed "s|^$(pwd)/||")
for f in $pipes; do
	case " $allowed " in *" $f "*) ;; *) fail "$f imports internal/pipe (allowed: $allowed)" ;; esac
done

echo "check-layers: ok (library: $(echo "$lib" | wc -l) packages, no tooling; modules: cmd/zipline, testbed, bench, otel; the seam: one fast path; internal/pipe: $(echo $pipes | wc -w) files)"
