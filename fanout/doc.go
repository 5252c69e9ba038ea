// Package fanout is a WebSocket hub: it broadcasts messages published on
// named channels, from Redis or from the application, to the WebSocket
// connections subscribed to them, compressing each message once rather
// than once per connection.
//
//	h := fanout.New(fanout.Options{})
//	mux := http.NewServeMux()
//	mux.Handle("/ws", h)              // clients connect to /ws?channel=news&channel=prices
//	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 10 * time.Second}
//	go srv.ListenAndServe()
//	go h.Relay(ctx, sub)              // Redis pub/sub (a Source), subscribed on demand
//	h.Broadcast("news", payload)      // or publish from the application
//	...
//	h.Shutdown(ctx)                   // close frames, then nothing left running
//	srv.Shutdown(ctx)
//
// Serve the hub with an http.Server whose ReadHeaderTimeout is set, not
// with http.ListenAndServe: without it, a client that sends its request
// headers a byte at a time (slowloris) holds a connection and a goroutine
// for as long as it likes. An upgraded connection is the hub's and has no
// such deadline: it ends when the client or the hub closes it.
//
// # Compression
//
// permessage-deflate (RFC 7692) is negotiated per connection. A broadcast
// is compressed at most once per wire form, whatever the number of
// connections: once as a frame that references no earlier message (for
// clients that asked for server_no_context_takeover, and for connections
// catching up), and, in the default Shared mode, once through the
// channel's own compression stream, for a channel that enough connections
// with context takeover follow to pay for its compressor
// (Options.SharedMinSubscribers, 128 by default: a compressor is about
// 0.8 MiB, so a hub of many small channels keeps none). A connection that has received the
// channel's last 32 KiB in order holds exactly that stream's window, so it
// can read the stream's frames: one compressor per channel gives every such
// connection the ratio of context takeover (about 0.25 of the payload on
// real JSON, where frames without history reach 0.54) with no compressor,
// and no window, per connection. A connection that joins, misses a
// message, or also follows another channel (whose messages then sit in its
// window) gets the no-history frame until it has again received 32 KiB of
// the channel in order. Messages under CompressionThreshold go out
// uncompressed and leave windows as they were. A message at or over it
// that deflate cannot shrink (random or already compressed data) still
// goes through the channel's stream, and to every connection with context
// takeover compressed (as stored blocks, a few bytes over its size), so
// that each window keeps the stream's history: such messages do not
// restart a connection's catch-up.
//
// The hub always asks clients for client_no_context_takeover, so it
// inflates their (rare) messages alone, from a pool.
//
// # Writes
//
// Broadcast queues a reference to the shared frame on each subscriber,
// bounded by QueueSize (the SlowConsumer policy decides what happens past
// it), and hands the connections that were idle to a writer goroutine, one
// per processor. A writer copies everything queued for a connection into
// one non-blocking write, so under load one system call carries many
// messages. A connection whose socket is full is handed to a goroutine of
// its own with blocking writes bounded by WriteTimeout, until it catches
// up; an idle connection has only its reader goroutine.
//
// # Limits
//
// MaxMessageSize bounds a client's message on the wire and inflated;
// MaxChannels bounds the channels per connection; CheckOrigin and
// Authorize refuse upgrade requests before any data flows. Protocol errors
// close the connection with the code RFC 6455 prescribes.
//
// # Redis
//
// Relay reads a Source (Add, Remove, Messages) and keeps it subscribed to
// exactly the channels the hub's clients want: a channel is added when its
// first client arrives and removed when its last one leaves.
//
// # Several hubs on a cluster
//
// ShardedSource follows channels over sharded pub/sub (SSUBSCRIBE), each on
// one of Partitions' partitions, whose hash tags spread them evenly over a
// cluster's primaries: a message goes only to the node that owns its
// partition, and from there only to the hubs that follow the channel,
// where plain PUBLISH on a cluster reaches every node. Each hub holds one
// subscriber connection per node it follows partitions on, and probes each
// partition (ShardedOptions.ProbeInterval) to find a subscription lost
// without an error. Publishers use the same Partitions:
//
//	parts, _ := fanout.NewPartitions(0, "")                 // 128, as every hub and publisher
//	src, _ := fanout.NewShardedSource(ctx, client, parts, fanout.ShardedOptions{})
//	go h.Relay(ctx, src)
//	parts.Publish(ctx, client, "news", payload)             // SPUBLISH on news's partition
package fanout
