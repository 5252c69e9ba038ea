package main

import (
	"context"
	"errors"
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

// `zipline fanout` relays only the channels of its allow-list: by default
// the one it was started for, with -allow the glob patterns given. A page
// that asks for any other channel, alone or beside an allowed one, gets
// 403 and no WebSocket; one that asks for allowed channels gets what is
// published on them.
func TestFanoutAllowList(t *testing.T) {
	redis := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := func(allow string) *fanoutServer {
		t.Helper()
		patterns, err := allowList(allow, "demo")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := startFanout(ctx, fanoutConfig{redis: zipline.Options{Addr: redis.Addr}, listen: "127.0.0.1:0",
			channel: "demo", allow: patterns, hub: fanout.Options{Logger: slog.New(slog.DiscardHandler)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return srv
	}
	dial := func(srv *fanoutServer, channels ...string) (*wsclient.Conn, error) {
		u := "ws" + strings.TrimPrefix(srv.URL(), "http") + "/ws?channel=" + strings.Join(channels, "&channel=")
		c, err := wsclient.Dial(ctx, u, wsclient.Options{})
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		return c, err
	}
	for _, tc := range []struct {
		allow     string
		ok, refus [][]string
	}{
		{"", [][]string{{"demo"}}, [][]string{{"secret"}, {"demo", "secret"}, {"demo2"}, {"*"}}},
		{"news.*, chat.*", [][]string{{"news.eu"}, {"chat.room/1", "news."}},
			[][]string{{"news"}, {"demo"}, {"secret"}, {"news.eu", "secret"}, {"xnews.eu"}}},
	} {
		srv := start(tc.allow)
		for _, chs := range tc.refus {
			_, err := dial(srv, chs...)
			var he *wsclient.HandshakeError
			if !errors.As(err, &he) || he.StatusCode != 403 || !strings.Contains(he.Body, "not allowed") {
				t.Errorf("-allow %q, channels %q: %v, want 403 not allowed", tc.allow, chs, err)
			}
		}
		for _, chs := range tc.ok {
			c, err := dial(srv, chs...)
			if err != nil {
				t.Fatalf("-allow %q, channels %q: %v", tc.allow, chs, err)
			}
			// The relay subscribes on demand: publish until the hub has
			// the channel (bounded), then read the message.
			for i := 0; ; i++ {
				v, err := redis.Do(ctx, "PUBLISH", chs[0], "hello "+chs[0])
				if err != nil {
					t.Fatal(err)
				}
				if v.Int() > 0 {
					break
				}
				if i == 500 {
					t.Fatalf("the hub never subscribed to %s", chs[0])
				}
				time.Sleep(10 * time.Millisecond) // polling server state, bounded
			}
			c.NetConn().SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, p, err := c.ReadMessage(); err != nil || string(p) != "hello "+chs[0] {
				t.Errorf("-allow %q, channel %s: got %q %v", tc.allow, chs[0], p, err)
			}
		}
		if st := srv.hub.Stats(); st.Rejected != uint64(len(tc.refus)) {
			t.Errorf("-allow %q: %d upgrades refused, want %d", tc.allow, st.Rejected, len(tc.refus))
		}
	}
}

// -allow takes Redis-style globs and refuses patterns it cannot read.
func TestFanoutAllowPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"news.*", []string{"news.", "news.eu", "news.a/b.c"}, []string{"news", "xnews.eu", "News.eu"}},
		{"*", []string{"", "a", "a/b"}, nil},
		{"h?llo", []string{"hello", "hallo", "h/llo"}, []string{"hllo", "heello"}},
		{"h*llo", []string{"hllo", "heeeello", "hello"}, []string{"hell", "helloo"}},
		{"h[ae]llo", []string{"hello", "hallo"}, []string{"hillo", "hllo"}},
		{"h[^e]llo", []string{"hallo", "hbllo"}, []string{"hello", "hllo"}},
		{"h[a-c]llo", []string{"hallo", "hcllo"}, []string{"hdllo"}},
		{"h[c-a]llo", []string{"hbllo"}, []string{"hdllo"}},
		{`a\*b`, []string{"a*b"}, []string{"axb", `a\*b`}},
		{`[\]]x`, []string{"]x"}, []string{"x", `\x`}},
		{"a*b*c", []string{"abc", "aXbYc", "abbbc", "acbc"}, []string{"ab", "acb", "abcd"}},
		{globQuote(`d*m?o[1]\`), []string{`d*m?o[1]\`}, []string{"d1m2o1\\", "demo"}},
	} {
		if err := checkGlob(tc.pattern); err != nil {
			t.Errorf("%q: %v", tc.pattern, err)
		}
		for _, s := range tc.match {
			if !globMatch(tc.pattern, s) {
				t.Errorf("%q does not match %q", tc.pattern, s)
			}
		}
		for _, s := range tc.miss {
			if globMatch(tc.pattern, s) {
				t.Errorf("%q matches %q", tc.pattern, s)
			}
		}
	}
	for _, bad := range []string{"news.[", `news\`, "[a-", `[\]`} {
		if _, err := allowList("ok,"+bad, "demo"); err == nil {
			t.Errorf("-allow %q accepted", bad)
		}
	}
	if got, err := allowList(" , ", "a*b"); err != nil || len(got) != 1 || !globMatch(got[0], "a*b") || globMatch(got[0], "axb") {
		t.Errorf("the default allow-list for channel a*b: %q %v, want that channel alone", got, err)
	}
}
