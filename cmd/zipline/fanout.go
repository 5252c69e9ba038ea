package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// cmdFanout is "zipline fanout": a fanout hub relaying a Redis server's
// pub/sub to WebSocket clients, with a demo page at /.
var cmdFanout = &command{
	name:     "fanout",
	summary:  "relay Redis pub/sub to WebSocket clients, compressing each message once; demo page at /",
	synopsis: "[flags]",
	doc: `Serves a WebSocket hub (/ws?channel=...) that relays a Redis server's pub/sub to its clients,
compressing each message once for all of them, and a demo page (/) that follows -channel.
Without -addr or -url it starts a local redis-server, stopped on exit. Ctrl-C stops it.`,
	flags: fanoutFlags,
}

// fanoutFlags defines fanout's flags and returns what runs it.
func fanoutFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	server := addServerFlags(fs, "", "Redis `host:port` (default: start a local redis-server)", urlFlagHelp)
	listen := fs.String("listen", "127.0.0.1:8080", "HTTP address of the demo page (/) and the hub (/ws)")
	channel := fs.String("channel", "demo", "the channel the page follows")
	allow := fs.String("allow", "", "comma-separated `patterns` of the channels a page may ask for, Redis-style globs\n"+
		"(* any run, ? one byte, [a-z] [^0-9] classes, \\ quotes), e.g. 'news.*,chat.*' (default: only -channel)")
	sample := fs.Duration("sample", time.Second, "publish a sample JSON message on -channel this often (0: off)")
	mode := fs.String("compression", "shared", "permessage-deflate mode: shared, stateless or off")
	partitions := fs.Int("partitions", 0, "follow channels over `N` sharded pub/sub partitions (SSUBSCRIBE, Redis and Valkey 7+),\n"+
		"so that several hubs share a cluster's nodes; publishers use the same N (fanout.Partitions).\n"+
		"0: plain pub/sub (PUBLISH, SUBSCRIBE)")
	return func(ctx context.Context, _ []string) error {
		target, err := server.options()
		if err != nil {
			return err
		}
		comp, err := parseCompression(*mode)
		if err != nil {
			return err
		}
		allowed, err := allowList(*allow, *channel)
		if err != nil {
			return err
		}
		if server.none() {
			a, _, stop, err := localServer("")
			if err != nil {
				return err
			}
			defer stop()
			target.Addr = a
		}
		if *partitions < 0 || *partitions > 16384 {
			return usagef("-partitions %d: want 0 to 16384", *partitions)
		}
		srv, err := startFanout(ctx, fanoutConfig{redis: target, listen: *listen, channel: *channel, allow: allowed,
			sample: *sample, partitions: *partitions, hub: fanout.Options{Compression: comp}})
		if err != nil {
			return err
		}
		fmt.Printf("fanout: relaying %s pub/sub; open %s/ (WebSocket at %s/ws?channel=..., channels %s), Ctrl-C to stop\n",
			describeServer(target), srv.URL(), "ws"+strings.TrimPrefix(srv.URL(), "http"), strings.Join(allowed, ","))
		<-ctx.Done()
		st := srv.hub.Stats()
		fmt.Printf("\nfanout: %d broadcasts, %d deliveries, %s of payload sent as %s\n", st.Broadcasts, st.Deliveries,
			byteSize(st.PayloadBytes), byteSize(st.QueuedBytes))
		return srv.Close()
	}
}

func parseCompression(s string) (fanout.Compression, error) {
	for _, c := range []fanout.Compression{fanout.Shared, fanout.Stateless, fanout.Off} {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, usagef("-compression %q: want shared, stateless or off", s)
}

type fanoutConfig struct {
	redis   zipline.Options
	listen  string
	channel string
	// allow lists the glob patterns (Redis-style) of the channels a
	// client may ask for; empty allows cfg.channel alone. A hub reachable
	// from a browser relays whatever channel a page names, so without this
	// any page could read every channel of the Redis server.
	allow  []string
	sample time.Duration
	// partitions, when positive, relays sharded pub/sub over that many
	// partitions (fanout.ShardedSource) instead of plain pub/sub.
	partitions int
	hub        fanout.Options
}

// source is what a hub relays: plain or sharded pub/sub.
type source interface {
	fanout.Source
	Close() error
}

// fanoutServer is a running hub with its Redis relay, HTTP server and
// sample publisher.
type fanoutServer struct {
	hub    *fanout.Hub
	http   *http.Server
	ln     net.Listener
	src    source
	client *zipline.Client
	cancel context.CancelFunc
	done   chan struct{} // relay and sample publisher stopped
}

func startFanout(ctx context.Context, cfg fanoutConfig) (*fanoutServer, error) {
	log := slog.Default()
	if cfg.hub.Logger != nil {
		log = cfg.hub.Logger
	}
	client, err := zipline.New(cfg.redis)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		client.Close()
		return nil, err
	}
	var src source
	publish := func(ctx context.Context, channel string, msg []byte) error {
		_, err := client.Publish(ctx, channel, msg)
		return err
	}
	if cfg.partitions > 0 {
		var parts *fanout.Partitions
		if parts, err = fanout.NewPartitions(cfg.partitions, ""); err == nil {
			src, err = fanout.NewShardedSource(ctx, client, parts, fanout.ShardedOptions{Logger: log})
		}
		publish = func(ctx context.Context, channel string, msg []byte) error {
			_, err := parts.Publish(ctx, client, channel, msg)
			return err
		}
	} else {
		src, err = fanout.NewRedisSource(ctx, client)
	}
	if err != nil {
		ln.Close()
		client.Close()
		return nil, err
	}
	allowed := cfg.allow
	if len(allowed) == 0 {
		allowed = []string{globQuote(cfg.channel)}
	}
	cfg.hub.Authorize = authorizeChannels(allowed, cfg.hub.Authorize)
	ctx, cancel := context.WithCancel(ctx)
	s := &fanoutServer{hub: fanout.New(cfg.hub), ln: ln, client: client, src: src, cancel: cancel, done: make(chan struct{})}
	page := template.Must(template.New("page").Parse(demoPage))
	mux := http.NewServeMux()
	mux.Handle("/ws", s.hub)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s.hub.Stats())
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page.Execute(w, struct{ Channel string }{cfg.channel})
	})
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go s.http.Serve(ln)
	samples, err := sampleMessages()
	if err != nil {
		log.Warn("fanout: no sample messages", "err", err)
	}
	go func() {
		defer close(s.done)
		relayed := make(chan struct{})
		go func() {
			defer close(relayed)
			if err := s.hub.Relay(ctx, s.src); err != nil && !errors.Is(err, context.Canceled) {
				log.Warn("fanout: relay ended", "err", err)
			}
		}()
		if cfg.sample > 0 && len(samples) > 0 {
			publishSamples(ctx, publish, cfg.channel, cfg.sample, samples, log)
		}
		<-relayed
	}()
	return s, nil
}

// URL is the page's address.
func (s *fanoutServer) URL() string { return "http://" + s.ln.Addr().String() }

// Close shuts the hub down (close frames to every client), then the HTTP
// server, the relay and the Redis connections.
func (s *fanoutServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.hub.Shutdown(ctx)
	s.http.Shutdown(ctx)
	s.cancel()
	<-s.done
	s.src.Close()
	s.client.Close()
	return err
}

// allowList turns -allow into glob patterns, checking each; an empty list
// allows channel alone.
func allowList(list, channel string) ([]string, error) {
	var out []string
	for p := range strings.SplitSeq(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if err := checkGlob(p); err != nil {
			return nil, usagef("-allow %q: %w", p, err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		out = []string{globQuote(channel)}
	}
	return out, nil
}

// authorizeChannels is a hub's Authorize: every channel a request asks for
// must match one of patterns, and then next, if set, must agree.
func authorizeChannels(patterns []string, next func(*http.Request, []string) error) func(*http.Request, []string) error {
	return func(r *http.Request, channels []string) error {
		for _, ch := range channels {
			if !slices.ContainsFunc(patterns, func(p string) bool { return globMatch(p, ch) }) {
				return fmt.Errorf("channel %q is not allowed (-allow)", ch)
			}
		}
		if next != nil {
			return next(r, channels)
		}
		return nil
	}
}

// globMatch reports whether s matches pattern, a glob as Redis reads one
// (PSUBSCRIBE, KEYS): * matches any run of bytes, / included; ? any one
// byte; [abc], [a-z] and [^abc] one byte in or out of a class; \ quotes
// the byte after it. pattern has passed checkGlob.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, starAt := -1, 0 // the last * seen, and where in s its run ends now
	for i < len(s) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				star, starAt = p, i
				p++
				continue
			case '?':
				p, i = p+1, i+1
				continue
			case '[':
				if in, n := globClass(pattern[p:], s[i]); in {
					p, i = p+n, i+1
					continue
				}
			case '\\':
				if pattern[p+1] == s[i] {
					p, i = p+2, i+1
					continue
				}
			default:
				if pattern[p] == s[i] {
					p, i = p+1, i+1
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		// Let the last * take one more byte and try again from there.
		starAt++
		p, i = star+1, starAt
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// globClass matches c against the class that class starts with ("[...]"),
// and returns whether c is in it and the class's length in the pattern.
func globClass(class string, c byte) (in bool, n int) {
	i := 1
	negate := i < len(class) && class[i] == '^'
	if negate {
		i++
	}
	for i < len(class) && class[i] != ']' {
		lo := class[i]
		if lo == '\\' {
			i++
			lo = class[i]
		}
		hi := lo
		if i+2 < len(class) && class[i+1] == '-' && class[i+2] != ']' {
			hi = class[i+2]
			if hi == '\\' {
				i++
				hi = class[i+2]
			}
			i += 2
			if lo > hi {
				lo, hi = hi, lo
			}
		}
		if lo <= c && c <= hi {
			in = true
		}
		i++
	}
	return in != negate, i + 1
}

// checkGlob refuses a pattern globMatch cannot read: an unterminated
// class, or a \ with nothing after it.
func checkGlob(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i++; i == len(p) {
				return errors.New("\\ at the end quotes nothing")
			}
		case '[':
			for i++; i < len(p) && p[i] != ']'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			if i >= len(p) {
				return errors.New("[ without its ]")
			}
		}
	}
	return nil
}

// globQuote returns a pattern that matches s alone.
func globQuote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sampleMessages are ~1 KiB real JSON updates (the samples embedded in the
// binary).
func sampleMessages() ([][]byte, error) { return corpus.RealMessages(1024) }

func publishSamples(ctx context.Context, publish func(context.Context, string, []byte) error, channel string, every time.Duration, samples [][]byte, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		msg := fmt.Appendf(nil, `{"seq":%d,"at":%q,"users":%s}`, seq, time.Now().Format(time.TimeOnly), samples[seq%len(samples)])
		if err := publish(ctx, channel, msg); err != nil && ctx.Err() == nil {
			log.Warn("fanout: publishing a sample", "err", err)
		}
	}
}

func byteSize(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// demoPage follows one channel: the live feed, the compression the browser
// negotiated, and what compression saved across the hub.
const demoPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>zipline fanout</title>
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:2em;max-width:60em;color:#222}
h1{font-size:1.4em} dl{display:grid;grid-template-columns:max-content auto;gap:.3em 1em}
dt{color:#666} dd{margin:0;font-weight:600} #feed{list-style:none;padding:0;font:13px ui-monospace,monospace}
#feed li{border-bottom:1px solid #eee;padding:.3em 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
</style></head><body>
<h1>zipline fanout: channel <code id="channel"></code></h1>
<dl>
<dt>Connection</dt><dd id="status">connecting…</dd>
<dt>Compression negotiated</dt><dd id="extensions">–</dd>
<dt>Messages received</dt><dd id="count">0</dd>
<dt>Bytes saved (hub-wide)</dt><dd id="saved">–</dd>
</dl>
<h2>Live feed</h2>
<ul id="feed"></ul>
<script>
const channel = new URLSearchParams(location.search).get("channel") || {{.Channel}};
document.getElementById("channel").textContent = channel;
const $ = id => document.getElementById(id);
let count = 0;
const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?channel=" + encodeURIComponent(channel));
ws.onopen = () => {
  $("status").textContent = "open";
  $("extensions").textContent = ws.extensions || "none (uncompressed)";
};
ws.onclose = e => { $("status").textContent = "closed (" + e.code + (e.reason ? " " + e.reason : "") + ")"; };
ws.onmessage = e => {
  $("count").textContent = ++count;
  const li = document.createElement("li");
  li.textContent = typeof e.data === "string" ? e.data.slice(0, 200) : "(binary message)";
  const feed = $("feed");
  feed.prepend(li);
  while (feed.children.length > 20) feed.lastChild.remove();
};
function kb(n) { return (n / 1024).toFixed(1) + " KiB"; }
async function stats() {
  try {
    const s = await (await fetch("/stats")).json();
    if (s.PayloadBytes > 0) {
      const saved = 100 * (1 - s.QueuedBytes / s.PayloadBytes);
      $("saved").textContent = saved.toFixed(1) + " % (" + kb(s.PayloadBytes) + " of messages sent as " + kb(s.QueuedBytes) + ")";
    }
  } catch (e) {}
}
stats();
setInterval(stats, 1000);
</script></body></html>
`
