package fanout

import (
	"log/slog"
	"net/http"
	"time"
)

// Compression selects how the hub uses permessage-deflate (RFC 7692) on
// connections whose client offers it. Clients that do not offer it always
// get uncompressed messages.
type Compression int

const (
	// Shared, the default, compresses each channel's messages once, as one
	// stream with context takeover, and sends that stream's frames to every
	// connection whose window holds the same history: a connection that
	// has received the channel's last 32 KiB in order. Others (newcomers,
	// connections that missed a message or also follow other channels) get
	// the message compressed once without history until they catch up.
	// This wins the ratio of context takeover (about 0.25 of the size on
	// real JSON, against 0.54 without) with no compressor per connection.
	Shared Compression = iota
	// Stateless compresses each message once per broadcast with no history
	// (server_no_context_takeover), as gorilla's PreparedMessage does.
	Stateless
	// Off declines permessage-deflate.
	Off
)

func (c Compression) String() string {
	switch c {
	case Shared:
		return "shared"
	case Stateless:
		return "stateless"
	case Off:
		return "off"
	}
	return "Compression(?)"
}

// SlowConsumerPolicy is what the hub does when a connection's send queue is
// full.
type SlowConsumerPolicy int

const (
	// DropMessages, the default, drops the new message for that connection
	// and counts it in Stats.Dropped; the connection stays open.
	DropMessages SlowConsumerPolicy = iota
	// Disconnect closes the connection (close code 1008) and counts it in
	// Stats.SlowClosed.
	Disconnect
)

// Options configures a Hub. The zero value is ready to use: every field
// has the default documented beside it.
type Options struct {
	// Compression selects the permessage-deflate mode; default Shared.
	Compression Compression
	// CompressionLevel is the flate level, 1 (fastest, default) to 9.
	CompressionLevel int
	// SharedMinSubscribers is how many connections with context takeover
	// a channel needs before it gets a compression stream of its own in
	// Shared mode. A stream is a flate compressor, about 0.8 MiB once it
	// has compressed a message, so it pays where many follow the channel:
	// at the default, at most about 6 KiB per connection, and far less on
	// a channel with thousands. A channel with fewer sends its messages
	// compressed without history (as Stateless), and gives its stream back
	// once its followers fall below half the threshold. Default
	// DefaultSharedMinSubscribers; 1 gives every channel a stream.
	SharedMinSubscribers int
	// CompressionThreshold is the smallest message, in bytes, that is
	// compressed; smaller ones go out uncompressed, since deflate gains
	// little on them and can even grow them. Default 256; negative
	// compresses every message.
	CompressionThreshold int

	// QueueSize is the most messages waiting to be written to one
	// connection; default 256. What happens beyond it is SlowConsumer.
	// Control frames are bounded apart: a connection holds at most one
	// unsent pong (a newer ping replaces its payload) and one close frame.
	QueueSize int
	// SlowConsumer is the policy for a connection whose queue is full;
	// default DropMessages.
	SlowConsumer SlowConsumerPolicy
	// WriteTimeout bounds a blocked write to one connection; the
	// connection is closed when it expires. Default 10s.
	WriteTimeout time.Duration
	// CloseTimeout is how long a closing connection may take to answer
	// the close frame before it is dropped. Default 2s.
	CloseTimeout time.Duration

	// MaxMessageSize is the largest message accepted from a client, in
	// bytes, as received and again decompressed; a larger one closes the
	// connection with code 1009. Default 64 KiB.
	MaxMessageSize int64
	// MaxChannels is the most channels one connection may ask for;
	// default 64.
	MaxChannels int

	// CheckOrigin decides whether an upgrade request's Origin is allowed;
	// a refused request gets 403 and no WebSocket. The default allows
	// requests with no Origin header and those whose Origin's host equals
	// the request's Host.
	CheckOrigin func(r *http.Request) bool
	// Authorize, if set, decides whether an upgrade request may receive
	// the channels it asks for. An error refuses it with 403 before the
	// upgrade: the client gets no WebSocket and so no data.
	Authorize func(r *http.Request, channels []string) error

	// Encode, if set, turns a channel's payload into the message sent,
	// once per broadcast (for example, to wrap it with the channel's
	// name). By default the payload is sent as it is: as a text message if
	// it is UTF-8, else as binary.
	Encode func(channel string, payload []byte) []byte

	// Logger receives connection errors at debug level and hub events at
	// info; default slog.Default().
	Logger *slog.Logger
}

// DefaultSharedMinSubscribers is Options.SharedMinSubscribers's default.
const DefaultSharedMinSubscribers = 128

func (o Options) withDefaults() Options {
	if o.SharedMinSubscribers <= 0 {
		o.SharedMinSubscribers = DefaultSharedMinSubscribers
	}
	if o.CompressionLevel < 1 || o.CompressionLevel > 9 {
		o.CompressionLevel = 1
	}
	switch {
	case o.CompressionThreshold == 0:
		o.CompressionThreshold = 256
	case o.CompressionThreshold < 0:
		o.CompressionThreshold = 0
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 256
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = 2 * time.Second
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 64 << 10
	}
	if o.MaxChannels <= 0 {
		o.MaxChannels = 64
	}
	if o.CheckOrigin == nil {
		o.CheckOrigin = sameOrigin
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
