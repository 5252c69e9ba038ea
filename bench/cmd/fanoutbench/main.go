// Command fanoutbench measures WebSocket broadcast over real TCP on
// loopback: a server process (this one) broadcasts ~1 KiB real JSON
// messages to N client connections held by a child process, and reports
// the server's CPU time per delivery (user + system, so the write system
// calls count), the write calls per delivery, the wire bytes over the
// payload, and the server's memory per idle connection.
//
//	go run ./cmd/fanoutbench -conns 10000 -msgs 200 -burst 1,8
//
// Servers: zipline's fanout hub (shared and stateless compression, and
// off) and gorilla/websocket with a PreparedMessage and a writer goroutine
// per connection. Each burst of B messages is broadcast back to back, then
// the server waits until the clients have every message; B = 1 is a
// paced stream (one write per message and connection), larger B lets
// writes coalesce.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

func main() {
	client := flag.Bool("client", false, "internal: run as the client process")
	url := flag.String("url", "", "internal: the server's WebSocket URL")
	conns := flag.Int("conns", 10_000, "client connections")
	msgs := flag.Int("msgs", 200, "messages per burst size")
	bursts := flag.String("burst", "1,8", "burst sizes, comma-separated")
	servers := flag.String("servers", "fanout-shared,fanout-stateless,fanout-off,gorilla-prepared,raw-write", "servers to run")
	flag.Parse()
	raiseFileLimit()
	if *client {
		if err := runClients(*url, *conns); err != nil {
			fmt.Fprintln(os.Stderr, "fanoutbench client:", err)
			os.Exit(1)
		}
		return
	}
	var bs []int
	for _, f := range strings.Split(*bursts, ",") {
		b, err := strconv.Atoi(f)
		if err != nil || b < 1 {
			fmt.Fprintf(os.Stderr, "fanoutbench: bad -burst %q\n", f)
			os.Exit(2)
		}
		bs = append(bs, b)
	}
	payloads, err := corpus.RealMessages(1024)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanoutbench:", err)
		os.Exit(1)
	}
	fmt.Println("| server | burst | deliveries | server CPU µs/delivery | writes/delivery | wire/payload | server memory/idle conn | wall s |")
	fmt.Println("| --- | --: | --: | --: | --: | --: | --: | --: |")
	for _, name := range strings.Split(*servers, ",") {
		for _, b := range bs {
			r, err := run(name, *conns, *msgs, b, payloads)
			if err != nil {
				fmt.Fprintf(os.Stderr, "fanoutbench: %s burst %d: %v\n", name, b, err)
				os.Exit(1)
			}
			fmt.Printf("| %s | %d | %d | %.2f | %s | %s | %s | %.1f |\n", name, b, r.deliveries, r.cpuPer,
				r.writesPer, r.ratio, r.memPer, r.wall.Seconds())
		}
	}
	fmt.Printf("\n%d connections, %d messages per row, %d B real JSON on average; GOMAXPROCS %d, %s\n",
		*conns, *msgs, avg(payloads), runtime.GOMAXPROCS(0), runtime.Version())
}

func avg(ps [][]byte) int {
	n := 0
	for _, p := range ps {
		n += len(p)
	}
	return n / len(ps)
}

func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// server is one implementation behind an HTTP server.
type server interface {
	http.Handler
	broadcast(msg []byte)
	stats() (writes, payload, queued uint64, ok bool)
	close()
}

type result struct {
	deliveries int
	cpuPer     float64
	writesPer  string
	ratio      string
	memPer     string
	wall       time.Duration
}

func run(name string, conns, msgs, burst int, payloads [][]byte) (result, error) {
	var r result
	var s server
	switch name {
	case "fanout-shared":
		s = newHub(fanout.Shared)
	case "fanout-stateless":
		s = newHub(fanout.Stateless)
	case "fanout-off":
		s = newHub(fanout.Off)
	case "gorilla-prepared":
		s = &gorillaServer{}
	case "raw-write":
		s = &rawServer{}
	default:
		return r, fmt.Errorf("unknown server %q", name)
	}
	defer s.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	hs := &http.Server{Handler: s}
	go hs.Serve(ln)
	defer hs.Close()

	mem0 := memInUse()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-client", "-conns", strconv.Itoa(conns), "-url", "ws://"+ln.Addr().String()+"/ws?channel=bench")
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	expect := func(total int) error {
		fmt.Fprintf(stdin, "%d\n", total)
		if !lines.Scan() {
			return fmt.Errorf("client process ended: %v", lines.Err())
		}
		if lines.Text() != "ok" {
			return fmt.Errorf("client: %s", lines.Text())
		}
		return nil
	}
	if err := expect(0); err != nil { // all connected
		return r, err
	}
	r.memPer = fmt.Sprintf("%.1f KiB", float64(max(int64(memInUse())-int64(mem0), 0))/float64(conns)/1024)

	// Warm up (past the shared context's 32 KiB), then measure.
	sent := 0
	for range 40 {
		s.broadcast(payloads[sent%len(payloads)])
		sent++
		if err := expect(sent * conns); err != nil {
			return r, err
		}
	}
	w0, p0, q0, ok := s.stats()
	cpu0, t0 := cpuTime(), time.Now()
	for i := 0; i < msgs; i += burst {
		for range burst {
			s.broadcast(payloads[sent%len(payloads)])
			sent++
		}
		if err := expect(sent * conns); err != nil {
			return r, err
		}
	}
	r.wall = time.Since(t0)
	cpu := cpuTime() - cpu0
	r.deliveries = (sent - 40) * conns
	r.cpuPer = float64(cpu.Microseconds()) / float64(r.deliveries)
	r.writesPer, r.ratio = "-", "-"
	if w1, p1, q1, _ := s.stats(); ok {
		r.writesPer = fmt.Sprintf("%.3f", float64(w1-w0)/float64(r.deliveries))
		r.ratio = fmt.Sprintf("%.3f", float64(q1-q0)/float64(p1-p0))
	}
	return r, nil
}

func memInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type hubServer struct{ *fanout.Hub }

func newHub(mode fanout.Compression) hubServer {
	return hubServer{fanout.New(fanout.Options{Compression: mode, QueueSize: 4096, Logger: slog.New(slog.DiscardHandler)})}
}

func (h hubServer) broadcast(msg []byte) { h.Broadcast("bench", msg) }

func (h hubServer) stats() (writes, payload, queued uint64, ok bool) {
	st := h.Stats()
	return st.Writes, st.PayloadBytes, st.QueuedBytes, true
}

func (h hubServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.Shutdown(ctx)
}

// gorillaServer is gorilla/websocket v1.5.3 with compression (level 1),
// a PreparedMessage per broadcast and a writer goroutine per connection.
type gorillaServer struct {
	mu    sync.Mutex
	chans []chan *websocket.PreparedMessage
	conns []*websocket.Conn
}

func (g *gorillaServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{EnableCompression: true}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c.SetCompressionLevel(1)
	ch := make(chan *websocket.PreparedMessage, 4096)
	g.mu.Lock()
	g.chans, g.conns = append(g.chans, ch), append(g.conns, c)
	g.mu.Unlock()
	go func() {
		for pm := range ch {
			if c.WritePreparedMessage(pm) != nil {
				return
			}
		}
	}()
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
}

func (g *gorillaServer) broadcast(msg []byte) {
	pm, _ := websocket.NewPreparedMessage(websocket.TextMessage, msg)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range g.chans {
		ch <- pm
	}
}

func (g *gorillaServer) stats() (uint64, uint64, uint64, bool) { return 0, 0, 0, false }

func (g *gorillaServer) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, ch := range g.chans {
		close(ch)
		g.conns[i].Close()
	}
}

// rawServer is the floor: one goroutine writes each message's frame,
// uncompressed, to every socket in turn with a plain Write; no queues, no
// WebSocket logic. It shows what the kernel's write costs.
type rawServer struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (s *rawServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

func (s *rawServer) broadcast(msg []byte) {
	f := append([]byte{0x81, 126, byte(len(msg) >> 8), byte(len(msg))}, msg...)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Write(f)
	}
}

func (s *rawServer) stats() (uint64, uint64, uint64, bool) { return 0, 0, 0, false }

func (s *rawServer) close() {
	for _, c := range s.conns {
		c.Close()
	}
}

// runClients is the client process: it opens n connections offering
// permessage-deflate, counts the data messages they receive (without
// inflating them), and answers each number read from stdin with "ok" once
// that many messages arrived in all.
func runClients(url string, n int) error {
	addr, path, _ := strings.Cut(strings.TrimPrefix(url, "ws://"), "/")
	var got atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	var cs []net.Conn
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		cs = append(cs, c)
		fmt.Fprintf(c, "GET /%s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"+
			"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n", path, addr)
		br := bufio.NewReaderSize(c, 8192)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 101 {
			return fmt.Errorf("connection %d: handshake: %v %v", i, resp, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := countMessages(br, &got); err != nil && err != io.EOF {
				select {
				case errs <- err:
				default:
				}
			}
		}()
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		want, _ := strconv.ParseInt(in.Text(), 10, 64)
		deadline := time.Now().Add(60 * time.Second)
		for got.Load() < want {
			select {
			case err := <-errs:
				return err
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d of %d messages after 60 s", got.Load(), want)
			}
			time.Sleep(200 * time.Microsecond) // polling the counter, bounded above
		}
		fmt.Println("ok")
	}
	for _, c := range cs {
		c.Close()
	}
	wg.Wait()
	return nil
}

// countMessages reads server frames and counts final data frames.
func countMessages(br *bufio.Reader, got *atomic.Int64) error {
	var hdr [10]byte
	for {
		if _, err := io.ReadFull(br, hdr[:2]); err != nil {
			return err
		}
		n := int64(hdr[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(br, hdr[2:4]); err != nil {
				return err
			}
			n = int64(hdr[2])<<8 | int64(hdr[3])
		case 127:
			if _, err := io.ReadFull(br, hdr[2:10]); err != nil {
				return err
			}
			n = 0
			for _, b := range hdr[2:10] {
				n = n<<8 | int64(b)
			}
		}
		if _, err := br.Discard(int(n)); err != nil {
			return err
		}
		if op := hdr[0] & 0x0f; hdr[0]&0x80 != 0 && op != 0x8 && op != 0x9 && op != 0xa {
			got.Add(1)
		}
	}
}
