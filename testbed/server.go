// Package testbed runs real redis-server and valkey-server processes on
// free loopback ports, each in its own temporary directory, for the demo,
// benchmarks and (through internal/testkit) tests. It never touches a server
// it did not start, and it does not import package testing, so the
// command-line tool can link it.
//
// StartCluster runs a Redis Cluster or Valkey Cluster of such servers, built
// with redis-cli, and breaks it on purpose for the cluster client's tests:
// kills, manual failovers, restarts, resharding, pauses, a whole shard down.
// StartSentinel runs a primary, its replicas and the sentinels watching
// them, and kills, fails over and restarts them. Each operation waits,
// bounded, until the cluster or the group has settled again.
//
// Binaries are found from the environment first (ZIPLINE_REDIS_SERVER,
// ZIPLINE_VALKEY_SERVER, ZIPLINE_REDIS_CLI, ZIPLINE_REDIS_SENTINEL,
// ZIPLINE_VALKEY_SENTINEL), then in the module's
// .tools/bin (where scripts/setup.sh puts the Valkey binary), then on PATH.
package testbed

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Kind selects the server implementation.
type Kind string

const (
	Redis  Kind = "redis"
	Valkey Kind = "valkey"
)

// ErrNoBinary means a binary a test needs (a server, redis-cli, chromium)
// is not installed and could not be; tests skip on it.
var ErrNoBinary = errors.New("testbed: binary not found")

// Config describes a server to start. The zero value starts redis-server.
type Config struct {
	Kind Kind
	// Args are extra configuration directives, e.g. "--requirepass", "pw".
	// Persistence is always off (--save "" --appendonly no).
	Args []string
	// Dir is where the server runs; empty means a new temporary directory,
	// removed by Stop.
	Dir string
	// TLS adds a TLS listener on a second free port (TLSAddr), with a
	// throwaway CA that TLSConfig trusts. The plain port stays open.
	TLS bool
	// MutualTLS is TLS with client certificates: the server asks for one
	// from its CA, and TLSConfig presents one (see ClientCertificate).
	MutualTLS bool
	// UnixSocket adds a unix socket listener (Socket).
	UnixSocket bool
}

// Server is one running (or stopped) server process.
type Server struct {
	Kind Kind
	Addr string // 127.0.0.1:port
	Port int
	// TLSAddr and TLSConfig are set with Config.TLS.
	TLSAddr   string
	TLSConfig *tls.Config
	// Socket is the unix socket path, set with Config.UnixSocket.
	Socket string

	bin     string
	args    []string
	dir     string
	ownsDir bool
	ca      *certAuthority // with Config.TLS

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process exits
	paused bool          // stopped by Pause and not yet resumed
}

// Binary returns the path of the server binary for kind.
func Binary(kind Kind) (string, error) {
	name, env := "redis-server", "ZIPLINE_REDIS_SERVER"
	if kind == Valkey {
		name, env = "valkey-server", "ZIPLINE_VALKEY_SERVER"
	}
	return findBinary(name, env)
}

// findBinary looks for a program where Binary does: $env, then the
// module's .tools/bin, then PATH.
func findBinary(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("testbed: %s=%s: %w", env, p, err)
		}
		return p, nil
	}
	if root, ok := moduleRoot(); ok {
		p := filepath.Join(root, ".tools", "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s (install it, or run scripts/setup.sh)", ErrNoBinary, name)
	}
	return p, nil
}

// moduleRoot finds the zipline repository's root by walking up from the
// working directory; the other modules (testbed, cmd/zipline, bench, otel)
// live inside it, so the library's go.mod is the outermost on the way up.
func moduleRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	found := ""
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			found = dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return found, found != ""
}

// Start starts a server and waits until it answers.
func Start(cfg Config) (*Server, error) { return startOn(cfg, freePort) }

// startOn is Start with the choice of port left to pick (a cluster node
// needs its bus port, port+10000, free as well).
func startOn(cfg Config, pick func() (int, error)) (*Server, error) {
	if cfg.Kind == "" {
		cfg.Kind = Redis
	}
	bin, err := Binary(cfg.Kind)
	if err != nil {
		return nil, err
	}
	s := &Server{Kind: cfg.Kind, bin: bin, args: cfg.Args, dir: cfg.Dir}
	if s.dir == "" {
		s.dir, err = os.MkdirTemp("", "zipline-"+string(cfg.Kind)+"-")
		if err != nil {
			return nil, err
		}
		s.ownsDir = true
	}
	if cfg.UnixSocket {
		s.Socket = filepath.Join(s.dir, "server.sock")
		s.args = append(s.args, "--unixsocket", s.Socket, "--unixsocketperm", "700")
	}
	if cfg.TLS || cfg.MutualTLS {
		if s.ca, err = newCertAuthority(); err != nil {
			s.cleanup()
			return nil, err
		}
		tlsArgs, clientCfg, err := tlsFiles(s.dir, s.ca, cfg.MutualTLS)
		if err != nil {
			s.cleanup()
			return nil, err
		}
		port, err := freePort()
		if err != nil {
			s.cleanup()
			return nil, err
		}
		s.TLSAddr, s.TLSConfig = net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), clientCfg
		s.args = append(append(s.args, "--tls-port", strconv.Itoa(port)), tlsArgs...)
	}
	// A free port can be taken between our probe and the server's bind, so
	// retry a few times with fresh ports.
	for attempt := 0; attempt < 5; attempt++ {
		port, err := pick()
		if err != nil {
			return nil, err
		}
		s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err = s.start(); err == nil {
			return s, nil
		}
		if !errors.Is(err, errExited) {
			s.cleanup()
			return nil, err
		}
	}
	s.cleanup()
	return nil, fmt.Errorf("testbed: could not start %s on a free port", bin)
}

var errExited = errors.New("testbed: server exited during start-up")

func (s *Server) start() error {
	args := []string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "server.log"),
	}
	args = append(args, s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testbed: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("%w: %s", errExited, s.logTail())
		default:
		}
		if s.ping() == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond) // polling a child process for readiness; not test synchronisation
	}
	s.kill()
	return fmt.Errorf("testbed: %s did not answer on %s within 15s: %s", s.bin, s.Addr, s.logTail())
}

// ping reports whether the server accepts connections and parses commands.
// An auth error still means it is up.
func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	v, err := readValue(bufio.NewReaderSize(c, 512))
	if err != nil {
		return err
	}
	if v.IsError() && strings.HasPrefix(string(v.Bytes()), "LOADING") {
		return errors.New("loading")
	}
	return nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// PID returns the process id of the running server, or 0.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Kill stops the server abruptly (SIGKILL), as a crash would, and waits for
// the process to exit. Restart brings it back on the same port.
func (s *Server) Kill() {
	s.kill()
}

func (s *Server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT) // a paused server must be able to die
	cmd.Process.Kill()
	<-done
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
}

// running reports whether the process is alive and not paused: whether it
// can answer.
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aliveLocked() && !s.paused
}

// alive reports whether the process is alive, paused or not.
func (s *Server) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aliveLocked()
}

func (s *Server) aliveLocked() bool {
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Restart starts the server again on the same port after Kill or Stop.
func (s *Server) Restart() error {
	s.kill()
	return s.start()
}

// Pause freezes the server (SIGSTOP): connections stay open but nothing is
// answered, like a hung host. Resume undoes it.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New("testbed: not running")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		return err
	}
	s.paused = sig == syscall.SIGSTOP
	return nil
}

// Stop terminates the server and removes its directory if Start made it.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	s.cleanup()
}

func (s *Server) cleanup() {
	if s.ownsDir {
		os.RemoveAll(s.dir)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Do sends one command on a fresh connection and returns the reply. It is a
// deliberately simple, unpipelined client for test set-up and inspection
// (CONFIG, ACL, INFO), independent of the client under test.
func (s *Server) Do(ctx context.Context, args ...any) (Value, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return Value{}, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	} else {
		c.SetDeadline(time.Now().Add(30 * time.Second))
	}
	buf, err := appendCommand(nil, args)
	if err != nil {
		return Value{}, err
	}
	if _, err := c.Write(buf); err != nil {
		return Value{}, err
	}
	v, err := readValue(bufio.NewReader(c))
	if err == nil && v.IsError() {
		err = fmt.Errorf("testbed: %s", v.Bytes())
	}
	return v, err
}

// Info returns the fields of one INFO section as a map.
func (s *Server) Info(ctx context.Context, section string) (map[string]string, error) {
	v, err := s.Do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	return ParseInfo(string(v.Bytes())), nil
}

// ParseInfo turns INFO's "field:value" lines into a map, skipping section
// headers.
func ParseInfo(text string) map[string]string {
	m := make(map[string]string)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && !strings.HasPrefix(k, "#") {
			m[k] = val
		}
	}
	return m
}

// UsedMemory returns INFO memory's used_memory in bytes.
func (s *Server) UsedMemory(ctx context.Context) (int64, error) {
	m, err := s.Info(ctx, "memory")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(m["used_memory"], 10, 64)
}

// The helpers the several-server setups (Cluster, Sentinel) share.

// stopAll kills each server by its PID and removes its directory; nil
// entries (servers that failed to start) are skipped.
func stopAll(servers ...[]*Server) {
	for _, list := range servers {
		for _, s := range list {
			if s == nil {
				continue
			}
			s.kill()
			s.cleanup()
		}
	}
}

// addrsOf returns the servers' addresses, in order.
func addrsOf(servers []*Server) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	return addrs
}

// serverAt returns the server listening on addr, or nil.
func serverAt(servers []*Server, addr string) *Server {
	for _, s := range servers {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}
