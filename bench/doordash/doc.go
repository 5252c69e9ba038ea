// Package doordash reproduces DoorDash's Redis compression experiment
// ("Connecting the dots" in DoorDash's engineering blog post on compressing
// the restaurant menus it caches in Redis):
// SET 10,000 restaurant menus of 9.5 KB to 709 KB, then GET them all, with
// no compression and with LZ4, and compare the times. DoorDash saw SET go
// from 16.5 s to 12.8 s and GET from 12.0 s to 6.4 s, because its network
// was the bottleneck. On loopback it never is, so the run happens on the
// paths of package netshape: a namespace whose loopback is shaped to
// 1 Gbit/s, one shaped to 10 Gbit/s, and one left unshaped.
//
// Each profile runs in a fresh namespace with its own redis-server. The
// menus come from corpus.Menus; every variant (zipline with no
// compression, LZ4 and zstd, and whatever peers the caller adds, such as
// GLIDE Go from the bench module) stores all of them from 16 goroutines,
// then reads them all back and checks their lengths. Variants run one
// after another on a flushed server, in an order that rotates between
// rounds, and the report takes the median of the rounds. Per phase it
// records the total time, the latency of every operation (p50, p99,
// p99.9, and the distribution for the chart), the bytes that crossed the
// shaped loopback, the client's and the server's CPU time and system
// calls, and what other processes used meanwhile.
//
// The goals it checks, from the project's issue: at 1 Gbit/s, compression
// must hide its CPU completely, so that GET runs at least 0.95 times the
// compression ratio faster than without it, and its p99 shrinks by as
// much; on unshaped loopback LZ4 stays within 10 % of no compression; and
// zipline beats the reference peer at every point.
//
// cmd/doordashbench runs it: zipline alone, or with GLIDE Go beside it
// under the glide build tag. It calls ServeChild first, since the
// measurement of each profile runs in a child process inside its
// namespace.
package doordash
