// Package zipline is a Redis and Valkey client that pipelines every call
// implicitly, on one server, a Sentinel group or a Cluster, and compresses
// stored values transparently, byte-compatible with Valkey GLIDE.
//
//	c, err := zipline.New(zipline.Options{Addr: "127.0.0.1:6379"})
//	if err != nil { ... }
//	defer c.Close()
//	err = c.Set(ctx, "user:1", payload, zipline.EX(10*time.Minute))
//	v, err := c.Get(ctx, "user:1")            // errors.Is(err, zipline.Nil) when missing
//	r, err := c.Do(ctx, "HSET", "h", "f", 1)  // any command
//
// # Why implicit pipelining
//
// A typical service has hundreds of goroutines, each making one request at a
// time. A pool gives each its own connection and round trip, so the server
// pays a read and a write system call per request. A Client instead shares
// one connection: a writer goroutine sends everything that is queued in one
// write, and a reader goroutine hands each reply back in order. Batching
// needs no timer. The writer flushes as soon as it finds work, so a lone
// request costs one round trip, as on a plain connection; under load,
// requests pile up while the previous write is in the kernel, and batches
// grow by themselves. The measurements against other clients are in the
// repository's bench/RESULTS.md
// (https://github.com/ziplinekv/zipline/blob/main/bench/RESULTS.md).
//
// With only a few callers, the hand-off from the reader goroutine is what
// a pool's caller does not pay; Options.SoloConns lends up to that many
// more connections to a single server, each to one caller at a time, who
// writes and reads on its own goroutine. They are off by default: on the
// machines measured, the shared connection alone did as well or better.
//
// # What does not share the connection
//
// Blocking commands (BLPOP, BRPOP, BLMOVE, BZPOPMIN/MAX, XREAD/XREADGROUP
// with BLOCK, WAIT) would stall every caller, so they run on a small pool of
// dedicated connections (Options.MaxDedicatedConns). Watch runs optimistic
// transactions on a dedicated connection too. Commands that change the
// connection's state (SELECT, CLIENT TRACKING, MULTI...) are refused on the
// shared connection with a *CommandError: use Options, Tx, Watch, or
// Dedicated for a Client bound to a connection of its own. Pub/sub runs on
// connections of its own too (Subscribe, PSubscribe, SSubscribe: one per
// server, shared by every Subscription, re-subscribed after a reconnect or
// a slot move). MONITOR and CLIENT REPLY are not supported.
//
// # On a cluster
//
// Each command goes where the servers' own description of it says
// (COMMAND INFO's key specs and request_policy and response_policy tips),
// for typed methods and Do alike: by its keys' slot; split by slot and
// merged back in the keys' order for commands that act on each key on its
// own (MGET, DEL, MSET; not MSETNX, whose keys are set all or none); to
// every primary (DBSIZE, FLUSHALL, KEYS, SCRIPT EXISTS, WAIT) or every node
// the Client holds a connection to (CONFIG SET, SCRIPT LOAD) at once, the
// replies merged as the servers say (added up, the fewest, true where all
// are, an error if any failed); SCAN walks every primary in turn. Other
// keyless commands (INFO, TIME, RANDOMKEY) go to one node. A Batch is
// routed by slot, and refuses what would go to every shard or node.
//
// # Errors and failures
//
// A missing key is Nil; an error reply is a *ServerError carrying its prefix
// (WRONGTYPE, NOSCRIPT, MOVED...). A request whose context ends returns
// ctx.Err() at once; its reply is read and dropped later, so the
// connection stays in step and is never closed for it. If the connection
// breaks, requests in flight fail with ErrConnLost and are not sent again
// (they may have run; on a cluster or a Sentinel group, reads go once more,
// to the primary), and the Client reconnects with backoff in the
// background.
// Requests that never reached the server match ErrNotSent and are safe to
// retry.
//
// # Packages
//
//   - zipline (this package): Client, Options, the typed commands, Do,
//     Batch, Tx, Watch, pub/sub, the client-side cache and the errors, for
//     one server, Sentinel and Cluster alike.
//   - codec: value compression compatible with Valkey GLIDE (zstd, LZ4) and
//     trained zstd dictionaries, usable on its own.
//   - layout: memory-efficient layouts of a key namespace (key zipping, hash
//     buckets, per-namespace codecs) with live migration.
//   - cache: cache-aside with single flight, a cross-process lock, early
//     refresh and negative caching.
//   - fanout: a WebSocket hub relaying pub/sub, each message compressed
//     once; fanout/wsclient is its client.
//
// In modules of their own, so that this one depends on no telemetry library
// and binds none of the tooling: github.com/ziplinekv/zipline/otel
// (OpenTelemetry tracing and metrics) and github.com/ziplinekv/zipline/cmd/zipline
// (the command-line tool: analyze, migrate, dict, inspect, fanout, demo).
package zipline
