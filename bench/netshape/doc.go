// Package netshape gives benchmarks a bandwidth-limited path between a
// client and a server on one machine, so that the effects that show only
// when the network is the bottleneck (compression paying for itself, a
// large value holding up small ones) can be measured at all. Loopback is
// never the bottleneck: it moves several GB/s on any machine.
//
// # How
//
// The preferred path is a network namespace of the benchmark's own
// (Create), whose loopback is shaped with tc's token bucket filter to the
// profile's rate (Namespace.Shape), with delay added by netem where the
// kernel has it. Both the server and the client run inside it: Run starts
// this program again in the namespace (through "ip netns exec"), and the
// child, which must call Serve first thing, runs the measurement and sends
// its result back. The namespace is named after the process plus a random
// suffix, so parallel runs never collide, and Run removes it when the
// measurement ends, fails or is interrupted, and checks that it is gone.
// Nothing outside the namespace is touched: its loopback is the only
// interface it has, and the only one shaped.
//
// Where the namespace cannot be made (no root, no iproute2, a kernel that
// refuses), Run falls back to a rate-limiting TCP proxy (Proxy) in front of
// the server, in this process. The proxy costs CPU that the namespace does
// not, so reports say which path ran (Setup).
//
// Every path is checked before it is trusted: Probe sends bulk data over
// it for a moment and measures the rate the receiver saw, which Setup
// reports beside the target.
//
// # Caveat
//
// On the shaped loopback both directions leave through the same qdisc, so
// the profile's rate is shared by requests and replies, unlike a
// full-duplex link. For GET and SET of large values one direction carries
// almost everything, so this matters little; the proxy shares its rate the
// same way, so the two paths agree.
//
// The namespace needs root and iproute2 ("ip" and "tc"); scripts/setup.sh
// installs iproute2 where it is missing.
package netshape
