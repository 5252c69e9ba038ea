package fanout_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
)

// A hub served by an http.Server with ReadHeaderTimeout, so that a client
// that never finishes its request headers (slowloris) is dropped rather
// than held forever, as http.ListenAndServe would hold it. A client
// connects, receives a broadcast, and the hub then the server shut down.
func Example() {
	hub := fanout.New(fanout.Options{})
	mux := http.NewServeMux()
	mux.Handle("/ws", hub) // clients connect to /ws?channel=news&channel=prices
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // in production, srv.Addr and srv.ListenAndServe
	if err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := wsclient.Dial(ctx, "ws://"+ln.Addr().String()+"/ws?channel=news", wsclient.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	hub.Broadcast("news", []byte(`{"headline":"fanout example"}`))
	_, msg, err := c.ReadMessage()
	fmt.Println(string(msg), err)
	c.Close()

	// The hub first (close frames to its clients), then the HTTP server.
	fmt.Println(hub.Shutdown(ctx))
	fmt.Println(srv.Shutdown(ctx), <-served)
	// Output:
	// {"headline":"fanout example"} <nil>
	// <nil>
	// <nil> http: Server closed
}
