package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// Two `zipline fanout -partitions 16` hubs on one server: the samples one
// of them publishes go out on the channel's sharded partition, and reach
// the pages of both.
func TestFanoutPartitions(t *testing.T) {
	redis := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var pages []*wsclient.Conn
	for i, sample := range []time.Duration{20 * time.Millisecond, 0} {
		srv, err := startFanout(ctx, fanoutConfig{redis: zipline.Options{Addr: redis.Addr}, listen: "127.0.0.1:0",
			channel: "demo", sample: sample, partitions: 16, hub: fanout.Options{Logger: slog.New(slog.DiscardHandler)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		c, err := wsclient.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL(), "http")+"/ws?channel=demo", wsclient.Options{})
		if err != nil {
			t.Fatalf("hub %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		pages = append(pages, c)
	}
	parts, err := fanout.NewPartitions(16, "")
	if err != nil {
		t.Fatal(err)
	}
	// Both hubs follow the sharded channel, and no plain one.
	for i := 0; ; i++ {
		v, err := redis.Do(ctx, "PUBSUB", "SHARDNUMSUB", parts.Channel("demo"))
		if err != nil {
			t.Fatal(err)
		}
		if v.Elems()[1].Int() == 2 {
			break
		}
		if i == 1000 {
			t.Fatal("the hubs never both subscribed")
		}
		time.Sleep(10 * time.Millisecond) // polling server state, bounded
	}
	if v, err := redis.Do(ctx, "PUBSUB", "NUMSUB", "demo"); err != nil || v.Elems()[1].Int() != 0 {
		t.Fatalf("plain subscribers of demo: %v, %v; want none", v, err)
	}
	for i, c := range pages {
		c.NetConn().SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, p, err := c.ReadMessage(); err != nil || !strings.Contains(string(p), `"seq":`) {
			t.Errorf("page of hub %d: %q, %v; want a sample", i, p, err)
		}
	}
}
