#!/bin/bash
# trace-events.sh: what a client's goroutines did per operation in an
# execution trace of one measured window (clusterbench -trace-dir): how
# often goroutines parked and were woken, and by which function, how many
# system calls they entered, and how often a processor went idle and was
# woken. The figures behind bench/results/cluster-c8-2026-11-28.md.
#
#   cd bench && scripts/trace-events.sh TRACE OPS
#
# OPS is the number of operations in the window (the cell's kops/s times
# its duration). Each transition is listed in total and by the first frame
# of its stack outside the runtime and the standard library's plumbing
# (for a wake-up, the stack is the waker's).
set -euo pipefail
trace=$1
ops=$2
go tool trace -d=parsed "$trace" | awk -v ops="$ops" '
function flush() {
	if (cur != "") { total[cur]++; bysite[cur "\t" (site == "" ? "-" : site)]++ }
	cur = ""; site = ""
}
/^M=/ {
	flush()
	if (match($0, /(GoID|ProcID)=[0-9]+ [A-Za-z]+->[A-Za-z]+ Reason="[^"]*"/)) {
		s = substr($0, RSTART, RLENGTH)
		split(s, f, " ")
		kind = (f[1] ~ /^GoID/) ? "goroutine" : "proc"
		reason = substr(s, index(s, "Reason=") + 8); sub(/"$/, "", reason)
		cur = kind " " f[2] (reason != "" ? " (" reason ")" : "")
	}
	next
}
/^\t[^\t]/ && cur != "" && site == "" {
	fn = $1
	if (fn !~ /^(runtime|internal\/|sync\.|syscall\.|net\.|os\.|time\.)/) site = fn
}
END {
	flush()
	printf "per operation (%d operations)\n", ops
	for (k in total) printf "%8.3f  %s\n", total[k] / ops, k | "sort -rn"
	close("sort -rn")
	printf "\nby site, at least 0.05 per operation\n"
	for (k in bysite) if (bysite[k] / ops >= 0.05) { split(k, p, "\t"); printf "%8.3f  %-45s %s\n", bysite[k] / ops, p[1], p[2] | "sort -rn" }
	close("sort -rn")
}'
