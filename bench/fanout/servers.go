package fanout

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/centrifugal/centrifuge"
	"github.com/gorilla/websocket"
	"github.com/lxzan/gws"

	zfanout "github.com/ziplinekv/zipline/fanout"
)

// Server is one implementation under test: it connects n fake clients
// that negotiated permessage-deflate, then broadcasts to all of them.
type Server interface {
	Name() string
	// Connect connects n clients whose writes w counts, and returns once
	// every one of them is subscribed.
	Connect(n int, w *counter) error
	// Broadcast queues msg for every client; the writes may come later.
	Broadcast(msg []byte)
	// WireBytes is what was written to every client so far.
	WireBytes() int64
	Close()
}

// Servers returns constructors of the implementations compared, in report
// order; a Server is used once.
func Servers() []func() Server {
	return []func() Server{
		func() Server { return &gorillaServer{} },
		func() Server { return &gorillaServer{prepared: true} },
		func() Server { return &centrifugeServer{} },
		func() Server { return &gwsServer{} },
		func() Server { return &hubServer{mode: zfanout.Stateless, try: true} },
		func() Server { return &hubServer{mode: zfanout.Shared, try: true} },
		func() Server { return &hubServer{mode: zfanout.Shared} },
	}
}

type conns []*fakeConn

func (cs conns) wire() int64 {
	var n int64
	for _, c := range cs {
		n += c.bytes.Load()
	}
	return n
}

func (cs conns) close() {
	for _, c := range cs {
		c.Close()
	}
}

func allowAll(*http.Request) bool { return true }

// gorillaServer is gorilla/websocket v1.5.3 as its BenchmarkBroadcast uses
// it: a goroutine per connection fed by a channel, writing either the
// message (compressed on every connection, level 1) or a PreparedMessage
// (compressed once).
type gorillaServer struct {
	prepared bool
	fakes    conns
	chans    []chan gorillaMsg
	wg       sync.WaitGroup
}

type gorillaMsg struct {
	raw []byte
	pm  *websocket.PreparedMessage
}

func (s *gorillaServer) Name() string {
	if s.prepared {
		return "gorilla PreparedMessage"
	}
	return "gorilla, per connection"
}

func (s *gorillaServer) Connect(n int, w *counter) error {
	up := websocket.Upgrader{EnableCompression: true, CheckOrigin: allowAll}
	for range n {
		fc := newFakeConn(nil, w)
		c, err := up.Upgrade(hijacker{httptest.NewRecorder(), fc}, upgradeRequest("/"), nil)
		if err != nil {
			return err
		}
		c.SetCompressionLevel(1)
		ch := make(chan gorillaMsg, 1)
		s.fakes, s.chans = append(s.fakes, fc), append(s.chans, ch)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for m := range ch {
				if m.pm != nil {
					c.WritePreparedMessage(m.pm)
				} else {
					c.WriteMessage(websocket.TextMessage, m.raw)
				}
			}
		}()
	}
	return nil
}

func (s *gorillaServer) Broadcast(msg []byte) {
	m := gorillaMsg{raw: msg}
	if s.prepared {
		m.pm, _ = websocket.NewPreparedMessage(websocket.TextMessage, msg)
	}
	for _, ch := range s.chans {
		ch <- m
	}
}

func (s *gorillaServer) WireBytes() int64 { return s.fakes.wire() }

func (s *gorillaServer) Close() {
	for _, ch := range s.chans {
		close(ch)
	}
	s.wg.Wait()
	s.fakes.close()
}

// gwsServer is lxzan/gws v1.9.1 with permessage-deflate at level 1 and its
// Broadcaster, which compresses once and queues the frame on each
// connection's asynchronous write queue.
type gwsServer struct {
	fakes conns
	conns []*gws.Conn
	wg    sync.WaitGroup
}

type gwsHandler struct{ gws.BuiltinEventHandler }

func (s *gwsServer) Name() string { return "gws Broadcaster" }

func (s *gwsServer) Connect(n int, w *counter) error {
	up := gws.NewUpgrader(&gwsHandler{}, &gws.ServerOption{
		PermessageDeflate: gws.PermessageDeflate{Enabled: true, Level: 1, Threshold: 256},
	})
	for range n {
		fc := newFakeConn(nil, w)
		c, err := up.Upgrade(hijacker{httptest.NewRecorder(), fc}, upgradeRequest("/"))
		if err != nil {
			return err
		}
		s.fakes, s.conns = append(s.fakes, fc), append(s.conns, c)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.ReadLoop()
		}()
	}
	return nil
}

func (s *gwsServer) Broadcast(msg []byte) {
	b := gws.NewBroadcaster(gws.OpcodeText, msg)
	for _, c := range s.conns {
		b.Broadcast(c)
	}
	b.Close()
}

func (s *gwsServer) WireBytes() int64 { return s.fakes.wire() }

func (s *gwsServer) Close() {
	s.fakes.close()
	s.wg.Wait()
}

// centrifugeServer is the centrifuge library v0.38.0: a Node with its
// in-memory broker and its WebSocket handler, compression at level 1 with
// the prepared-message cache (1 MiB), clients speaking its JSON protocol
// (connect, then subscribe). Its publications carry the payload inside the
// protocol's JSON envelope.
type centrifugeServer struct {
	node  *centrifuge.Node
	fakes conns
	wg    sync.WaitGroup
}

func (s *centrifugeServer) Name() string { return "centrifuge, prepared cache" }

func (s *centrifugeServer) Connect(n int, w *counter) error {
	node, err := centrifuge.New(centrifuge.Config{LogLevel: centrifuge.LogLevelNone})
	if err != nil {
		return err
	}
	node.OnConnecting(func(context.Context, centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
		return centrifuge.ConnectReply{Credentials: &centrifuge.Credentials{UserID: "bench"}}, nil
	})
	node.OnConnect(func(c *centrifuge.Client) {
		c.OnSubscribe(func(_ centrifuge.SubscribeEvent, cb centrifuge.SubscribeCallback) {
			cb(centrifuge.SubscribeReply{}, nil)
		})
	})
	if err := node.Run(); err != nil {
		return err
	}
	s.node = node
	h := centrifuge.NewWebsocketHandler(node, centrifuge.WebsocketConfig{
		Compression: true, CompressionLevel: 1, CompressionPreparedMessageCacheSize: 1 << 20, CheckOrigin: allowAll,
	})
	in := append(clientFrame([]byte(`{"id":1,"connect":{}}`)), clientFrame([]byte(`{"id":2,"subscribe":{"channel":"bench"}}`))...)
	for range n {
		fc := newFakeConn(in, w)
		s.fakes = append(s.fakes, fc)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			h.ServeHTTP(hijacker{httptest.NewRecorder(), fc}, upgradeRequest("/"))
		}()
	}
	for i := 0; node.Hub().NumSubscribers("bench") < n; i++ {
		if i == 3000 {
			return fmt.Errorf("centrifuge: %d of %d clients subscribed", node.Hub().NumSubscribers("bench"), n)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded above
	}
	return nil
}

func (s *centrifugeServer) Broadcast(msg []byte) { s.node.Publish("bench", msg) }

func (s *centrifugeServer) WireBytes() int64 { return s.fakes.wire() }

func (s *centrifugeServer) Close() {
	s.fakes.close()
	s.wg.Wait()
	s.node.Shutdown(context.Background())
}

// hubServer is zipline's fanout hub. With try, the fake connections offer
// fanout.TryWriter, as TCP sockets do, so the hub's writer goroutines
// write them directly; without it they are plain net.Conns, which the hub
// writes from a goroutine per connection and burst.
type hubServer struct {
	mode  zfanout.Compression
	try   bool
	hub   *zfanout.Hub
	fakes conns
}

func (s *hubServer) Name() string {
	name := "zipline fanout, " + s.mode.String()
	if !s.try {
		name += ", net.Conn only"
	}
	return name
}

func (s *hubServer) Connect(n int, w *counter) error {
	s.hub = zfanout.New(zfanout.Options{Compression: s.mode, CheckOrigin: allowAll, QueueSize: 1024,
		Logger: slog.New(slog.DiscardHandler)})
	for range n {
		fc := newFakeConn(nil, w)
		s.fakes = append(s.fakes, fc)
		rw := hijacker{ResponseRecorder: httptest.NewRecorder(), conn: fc}
		if s.try {
			rw.conn = tryConn{fc}
		}
		s.hub.ServeHTTP(rw, upgradeRequest("/ws?channel=bench"))
		if rw.Code != http.StatusOK {
			return fmt.Errorf("fanout: upgrade refused: %d %s", rw.Code, rw.Body)
		}
	}
	return nil
}

func (s *hubServer) Broadcast(msg []byte) { s.hub.Broadcast("bench", msg) }

func (s *hubServer) WireBytes() int64 { return s.fakes.wire() }

func (s *hubServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	s.fakes.close()
	s.hub.Shutdown(ctx)
}
