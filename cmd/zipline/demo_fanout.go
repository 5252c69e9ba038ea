package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// demoFanoutClients and demoFanoutMessages size the demo's fanout section
// (tests lower them).
var (
	demoFanoutClients  = 500
	demoFanoutMessages = 200
)

// demoFanout is the demo's fanout section: a hub relays one Redis channel
// to simulated WebSocket clients, once per compression mode, and reports
// the wire bytes per delivery and the CPU per delivery. Every client
// checks every message byte for byte.
func demoFanout(ctx context.Context, d *demoEnv) error {
	n := demoFanoutClients
	// Real messages, from the corpus embedded in the binary: with no
	// fallback, the label below cannot be wrong.
	msgs, err := corpus.RealMessages(1024)
	if err != nil {
		return err
	}
	msgs = msgs[:min(demoFanoutMessages, len(msgs))]
	size := 0
	for _, m := range msgs {
		size += len(m)
	}
	fmt.Printf("\n== Fanout: Redis pub/sub to WebSocket, each message compressed once ==\n\n")
	fmt.Printf("%d WebSocket clients on one channel; %d real JSON messages of ~%d B (pairs of user records from\n"+
		"simdjson-data's random.json, embedded) PUBLISHed to Redis, relayed by the hub\n\n", n, len(msgs), size/len(msgs))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "compression\tnegotiated\twire B/delivery\tof payload\tcompressions/message\tCPU µs/delivery (hub + clients)\t")
	for _, mode := range []fanout.Compression{fanout.Off, fanout.Stateless, fanout.Shared} {
		r, err := fanoutRun(ctx, d, mode, n, msgs)
		if err != nil {
			return fmt.Errorf("fanout, %v: %w", mode, err)
		}
		fmt.Fprintf(tw, "%v\t%s\t%.0f\t%.1f %%\t%.2f\t%.1f\t\n", mode, r.negotiated, r.wirePer, 100*r.ratio, r.compPer, r.cpuPer)
	}
	tw.Flush()
	fmt.Println("\nstateless: each message compressed once for every client (server_no_context_takeover); shared: once")
	fmt.Println("through the channel's own deflate stream, whose frames every client that received the channel's last")
	fmt.Println("32 KiB can read, so all of them get the ratio of context takeover with no compressor per connection.")
	fmt.Println("Clients inflate in this process too, so the CPU column includes their work.")
	return nil
}

type fanoutResult struct {
	negotiated                      string
	wirePer, ratio, compPer, cpuPer float64
}

func fanoutRun(ctx context.Context, d *demoEnv, mode fanout.Compression, n int, msgs [][]byte) (fanoutResult, error) {
	var r fanoutResult
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	hub := fanout.New(fanout.Options{Compression: mode, Logger: slog.New(slog.DiscardHandler)})
	defer func() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer scancel()
		hub.Shutdown(sctx)
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	hs := &http.Server{Handler: hub}
	go hs.Serve(ln)
	defer hs.Close()
	channel := fmt.Sprintf("zipline-demo:fanout:%d", time.Now().UnixNano())
	src, err := fanout.NewRedisSource(ctx, d.client)
	if err != nil {
		return r, err
	}
	defer src.Close()
	relayCtx, stopRelay := context.WithCancel(ctx)
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		hub.Relay(relayCtx, src)
	}()
	defer func() {
		stopRelay()
		<-relayed
	}()

	url := "ws://" + ln.Addr().String() + "/ws?channel=" + channel
	clients := make([]*wsclient.Conn, n)
	for i := range clients {
		c, err := wsclient.Dial(ctx, url, wsclient.Options{})
		if err != nil {
			return r, err
		}
		defer c.Close()
		clients[i] = c
	}
	r.negotiated = "none"
	if ext := clients[0].Extensions(); ext != "" {
		r.negotiated = ext
	}
	// Publish once the hub's Redis subscription is in place (bounded).
	for i := 0; ; i++ {
		v, err := d.client.Do(ctx, "PUBSUB", "NUMSUB", channel)
		if err != nil {
			return r, err
		}
		if numsub(v, channel) > 0 {
			break
		}
		if i == 500 {
			return r, errors.New("the hub never subscribed to its Redis channel")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded above
	}

	st0, cpu0 := hub.Stats(), sysstat.Take(0)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, want := range msgs {
				c.NetConn().SetReadDeadline(time.Now().Add(30 * time.Second))
				_, got, err := c.ReadMessage()
				if err != nil {
					errs <- fmt.Errorf("client, message %d: %w", i, err)
					return
				}
				if !bytes.Equal(got, want) {
					errs <- fmt.Errorf("client, message %d: corrupt", i)
					return
				}
			}
		}()
	}
	for _, msg := range msgs {
		if _, err := d.client.Do(ctx, "PUBLISH", channel, msg); err != nil {
			return r, err
		}
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return r, err
	}
	use, st := sysstat.Take(0).Sub(cpu0), hub.Stats()
	deliveries := float64(st.Deliveries - st0.Deliveries)
	if deliveries == 0 {
		return r, errors.New("nothing delivered")
	}
	r.wirePer = float64(st.QueuedBytes-st0.QueuedBytes) / deliveries
	r.ratio = float64(st.QueuedBytes-st0.QueuedBytes) / float64(st.PayloadBytes-st0.PayloadBytes)
	r.compPer = float64(st.Compressions-st0.Compressions) / float64(len(msgs))
	r.cpuPer = float64(use.Self.Microseconds()) / deliveries
	return r, nil
}

// numsub reads PUBSUB NUMSUB's count for channel: a map in RESP3, a flat
// array in RESP2.
func numsub(v zipline.Value, channel string) int64 {
	if m, err := v.AsMap(); err == nil {
		k, _ := m[channel].AsInt64()
		return k
	}
	if arr, _ := v.AsSlice(); len(arr) == 2 {
		k, _ := arr[1].AsInt64()
		return k
	}
	return 0
}
