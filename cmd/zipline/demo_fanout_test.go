package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// The fanout section relays every message to every client intact, in each
// mode, and shows that compression shrinks the wire bytes.
func TestDemoFanout(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	savedN, savedM := demoFanoutClients, demoFanoutMessages
	demoFanoutClients, demoFanoutMessages = 20, 60
	defer func() { demoFanoutClients, demoFanoutMessages = savedN, savedM }()
	out, err := stdoutOf(t, func() error { return demoFanout(ctx, &demoEnv{addr: srv.Addr, client: c, dur: time.Second}) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"20 WebSocket clients", "60 real JSON messages", "random.json", "off", "stateless", "shared",
		"permessage-deflate", "compressions/message"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	t.Log(out)
}
