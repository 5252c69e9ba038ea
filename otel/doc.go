// Package ziplineotel traces zipline's commands with OpenTelemetry and
// exports its statistics as OpenTelemetry metrics. It lives in a module of
// its own, so that the zipline module does not depend on OpenTelemetry.
//
//	opts := zipline.Options{Addr: "cache:6379"}
//	if err := ziplineotel.Instrument(&opts); err != nil { ... } // spans and durations
//	c, err := zipline.New(opts)
//	...
//	unregister, err := ziplineotel.RegisterMetrics(c, opts) // c.Stats() as metrics
//	defer unregister()
//
// The tracer and meter come from the global providers unless
// WithTracerProvider and WithMeterProvider give others. Everything follows
// the semantic conventions for database clients and for Redis
// (https://opentelemetry.io/docs/specs/semconv/db/redis/), version 1.43.0,
// the schema URL of the tracer and meter.
//
// # Spans
//
// Each command, batch and transaction gets a span of kind client, created
// by the hook, which wraps the command on its way to the server: a typed
// method such as Get is one span named after its command. Its attributes:
//
//   - db.system.name: "redis", or the name given by WithDBSystem.
//   - db.operation.name, also the span name: the command's name as sent
//     ("GET", "EVALSHA"). A pipeline (Batch) is "PIPELINE", or "PIPELINE
//     SET" when every command is a SET; a transaction (Tx) is "MULTI" or
//     "MULTI SET". A pipeline of one command is that command.
//   - db.operation.batch.size: the commands of a pipeline or transaction
//     (not counting MULTI and EXEC), when there are not exactly one.
//   - server.address and server.port: from Options.Addr (or the first of
//     Options.Addrs); a unix socket's path, with no port.
//   - db.namespace: Options.DB, the database selected as each connection
//     is set up (a SELECT on a Client from Dedicated is not followed).
//   - db.query.text, only with WithQueryText: the command name and a "?"
//     per argument.
//   - error.type, db.response.status_code and the span status, on failure.
//
// Neither keys, values nor passwords are ever recorded: only command names
// are read from a command, never its arguments, and the connection's AUTH
// is not a command that hooks see.
//
// # Errors
//
// A null reply (zipline.Nil) is a result, not an error. An error reply
// sets error.type and db.response.status_code to its prefix ("WRONGTYPE",
// "ERR", "NOSCRIPT"); a prefix that is not an upper-case code of at most
// 32 characters gives error.type "_OTHER" and no status code. The span
// status description is left empty for error replies, whose text can
// quote arguments. Any other error sets error.type to the first of these
// it matches with errors.Is: "zipline.ErrConnLost",
// "zipline.ErrNotConnected", "zipline.ErrPendingLimit", "zipline.ErrClosed",
// "zipline.ErrTxFailed" (a transaction aborted by WATCH),
// "zipline.ErrNotAllowed", "context.DeadlineExceeded", "context.Canceled",
// "zipline.ErrNotSent"; otherwise to its Go type ("*net.OpError"), or
// "_OTHER"; and the status description to its message. A batch fails as
// Batch.Exec does: with its first error reply (for a transaction, one of
// EXEC's results), or the error of the whole batch.
//
// # Metrics
//
// The hook records db.client.operation.duration (histogram, seconds, with
// the bucket boundaries the conventions advise), one measurement per
// command, batch or transaction, equal to its span's duration, with the
// span's attributes other than db.operation.batch.size and db.query.text.
//
// RegisterMetrics adds observable instruments over Client.Stats, each with
// db.system.name, server.address, server.port, db.namespace and the
// attributes of WithAttributes:
//
//	zipline.pipeline.request.in_flight  {request}    up-down  written, awaiting replies
//	zipline.pipeline.request.queued     {request}    up-down  waiting to be written
//	zipline.pipeline.pending.size       By           up-down  bytes queued or in flight
//	zipline.pipeline.requests           {request}    counter  requests written (a batch counts once)
//	zipline.pipeline.writes             {write}      counter  writes, by zipline.pipeline.write.requests:
//	                                                          "1", "2-3", "4-7", ... "2048+" requests each
//	zipline.pipeline.reconnects         {reconnect}  counter  reconnections
//	db.client.connection.count          {connection} up-down  dedicated connections, by
//	                                                          db.client.connection.state: used (lent), idle
//	db.client.connection.max            {connection} up-down  Options.MaxDedicatedConns
//	db.client.connection.idle.max       {connection} up-down  Options.MaxIdleDedicated
//	zipline.compression.encodes         {value}      counter  values written, by zipline.compression.outcome:
//	                                                          compressed, skipped
//	zipline.compression.decodes         {value}      counter  values read with a header: decompressed, invalid
//	zipline.compression.input.size      By           counter  plaintext bytes of compressed values
//	zipline.compression.output.size     By           counter  their stored bytes
//	zipline.compression.ratio           1            gauge    output over input bytes
//	zipline.cache.requests              {request}    counter  reads through the client-side cache, by
//	                                                          zipline.cache.result: hit, miss
//	zipline.cache.invalidations         {key}        counter  keys the server said changed, and flushes
//	zipline.cache.removals              {entry}      counter  entries dropped, by zipline.cache.reason:
//	                                                          evicted, expired
//	zipline.cache.entries               {entry}      up-down  entries held by the client-side cache
//	zipline.cache.size                  By           up-down  bytes it holds, bookkeeping included
//
// The db.client.connection.* metrics, the conventions' connection-pool
// metrics, describe the pool of dedicated connections (blocking commands,
// Watch, Dedicated), named by db.client.connection.pool.name as
// "address:port/db"; the shared connection is not part of it.
package ziplineotel
