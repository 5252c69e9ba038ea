package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/ziplinekv/zipline"
)

// client is one subscriber implementation. open subscribes to channel and
// starts a consumer that hands every message to rec; it returns once the
// client has sent its SUBSCRIBE (runCell then waits for the server to show
// it).
type client struct {
	name string
	desc func(buffer int) string
	open func(ctx context.Context, addr string, proto int, channel string, buffer int, rec *recorder) (*session, error)
}

// session is a subscribed client.
type session struct {
	close func()
	// stats, if the client counts them, returns the messages it dropped
	// (its buffer's overflow policy), the gaps it reported, and the gaps'
	// reasons as the consumer saw them ("backlog×3").
	stats func() (dropped, gaps int64, reasons string)
}

var clients = []*client{
	{
		name: "zipline",
		desc: func(buffer int) string {
			return fmt.Sprintf("zipline.New(Options{Addr, Protocol, Subscriptions: {Buffer: %d}}) (Overflow DropOldest, the default: "+
				"with Buffer ≥ -messages it never overflows); Subscribe(ctx, ch), then `for m, err := range sub.Messages(ctx)` "+
				"on one goroutine. The connection's reader puts each message into the subscription's buffer itself "+
				"(never blocking: the buffer's Overflow policy applies to a consumer that falls behind); a message that finds "+
				"the buffer full is dropped, counted in Dropped and reported as a gap", buffer)
		},
		open: openZipline,
	},
	{
		name: "goredis",
		desc: func(buffer int) string {
			return fmt.Sprintf("go-redis v9 redis.NewClient(&Options{Addr, Protocol}); Subscribe(ctx, ch), Receive (the confirmation), "+
				"then `for m := range ps.Channel(redis.WithChannelSize(%d))` on one goroutine (default size 100). When the channel is "+
				"full its reader goroutine waits (WithChannelSendTimeout, default 1 min, then it drops the message and logs), so it "+
				"pushes back on the socket instead of dropping", buffer)
		},
		open: openGoredis,
	},
	{
		name: "rueidis",
		desc: func(int) string {
			return "rueidis.NewClient(ClientOption{InitAddress, AlwaysRESP2: resp2}); Receive(ctx, B().Subscribe().Channel(ch).Build(), fn), " +
				"fn counting on the connection's reading goroutine (rueidis calls it synchronously: a slow fn pushes back on the " +
				"socket, nothing is dropped; there is no buffer to size)"
		},
		open: openRueidis,
	},
}

// rawClient is the ceiling: a bare TCP connection in RESP2 that subscribes
// and counts whole message frames by their byte length, parsing nothing.
var rawClient = &client{
	name: "raw",
	desc: func(int) string {
		return "not a client: a net.Conn that sends SUBSCRIBE and counts received bytes / frame length (64 KiB reads, RESP2). " +
			"What this server and publisher deliver to a reader that does nothing: the ceiling"
	},
	open: openRaw,
}

func clientName(c *client) string { return c.name }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openZipline(ctx context.Context, addr string, proto int, channel string, buffer int, rec *recorder) (*session, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Protocol: proto, Logger: quiet,
		Subscriptions: zipline.Subscriptions{Buffer: buffer}})
	if err != nil {
		return nil, err
	}
	if got := c.Protocol(); got != proto {
		c.Close()
		return nil, fmt.Errorf("zipline speaks RESP%d, want %d", got, proto)
	}
	sub, err := c.Subscribe(ctx, channel)
	if err != nil {
		c.Close()
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	reasons := map[string]int{} // gaps by GapError.Reason
	wg.Go(func() {
		for m, err := range sub.Messages(cctx) {
			if err != nil {
				if g := (*zipline.GapError)(nil); errors.As(err, &g) {
					mu.Lock()
					reasons[g.Reason]++
					mu.Unlock()
					continue // counted by sub.Stats too
				}
				return
			}
			rec.got(len(m.Payload))
		}
	})
	return &session{
		close: func() { cancel(); sub.Close(); c.Close(); wg.Wait() },
		stats: func() (int64, int64, string) {
			st := sub.Stats()
			mu.Lock()
			defer mu.Unlock()
			var rs []string
			for r, n := range reasons {
				rs = append(rs, fmt.Sprintf("%s×%d", r, n))
			}
			slices.Sort(rs)
			return st.Dropped, st.Gaps, strings.Join(rs, " ")
		},
	}, nil
}

func openGoredis(ctx context.Context, addr string, proto int, channel string, buffer int, rec *recorder) (*session, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto})
	ps := c.Subscribe(ctx, channel)
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		ps.Close()
		c.Close()
		return nil, err
	}
	ch := ps.Channel(redis.WithChannelSize(buffer))
	var wg sync.WaitGroup
	wg.Go(func() {
		for m := range ch {
			rec.got(len(m.Payload))
		}
	})
	return &session{close: func() { ps.Close(); c.Close(); wg.Wait() }}, nil
}

func openRueidis(_ context.Context, addr string, proto int, channel string, _ int, rec *recorder) (*session, error) {
	// rueidis refuses RESP2 unless its client-side cache is off too.
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, AlwaysRESP2: proto == 2, DisableCache: proto == 2})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		c.Receive(cctx, c.B().Subscribe().Channel(channel).Build(), func(m rueidis.PubSubMessage) {
			rec.got(len(m.Message))
		})
	})
	return &session{close: func() { cancel(); c.Close(); wg.Wait() }}, nil
}

func openRaw(ctx context.Context, addr string, _ int, channel string, _ int, rec *recorder) (*session, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	bulk := func(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }
	if _, err := io.WriteString(conn, "*2\r\n"+bulk("SUBSCRIBE")+bulk(channel)); err != nil {
		conn.Close()
		return nil, err
	}
	confirm := int64(len("*3\r\n" + bulk("subscribe") + bulk(channel) + ":1\r\n"))
	frame := int64(len("*3\r\n"+bulk("message")+bulk(channel)) + len(bulk(strings.Repeat("m", rec.size))))
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 64<<10)
		var total, counted int64
		for {
			k, err := conn.Read(buf)
			if total == 0 && k > 0 && !bytes.HasPrefix(buf[:k], []byte("*3\r\n$9\r\nsubscribe")) {
				return // not the confirmation: nothing counted, the cell fails
			}
			total += int64(k)
			if whole := max(0, (total-confirm)/frame); whole > counted {
				rec.add(whole - counted)
				counted = whole
			}
			if err != nil {
				return
			}
		}
	})
	return &session{close: func() { conn.Close(); wg.Wait() }}, nil
}
