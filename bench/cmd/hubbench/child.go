package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The coordinator drives each child process over its stdin and stdout: it
// writes one command per line ("stats", "mem", "connect", "quit"), and the
// child answers each with one line of JSON, an envelope holding either the
// reply or an error. A child whose stdin closes (the coordinator is gone)
// quits as if told to; a child also dies with the coordinator through the
// parent-death signal, so that no hub or client process outlives a run.

// envelope is a child's answer to one command.
type envelope struct {
	Error string          `json:"error,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// child is a running child process.
type child struct {
	name  string
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string // its stdout, line by line; closed at EOF
	mu    sync.Mutex  // one command at a time
}

// startChild runs this program again with args.
func startChild(name string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	// Never outlive the coordinator, even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, in: in, lines: make(chan string, 1)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c, nil
}

// call sends command (none if "") and decodes the answer into v, waiting
// at most timeout.
func (c *child) call(ctx context.Context, command string, timeout time.Duration, v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if command != "" {
		if _, err := io.WriteString(c.in, command+"\n"); err != nil {
			return fmt.Errorf("%s: %s: %w", c.name, command, err)
		}
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case line, ok := <-c.lines:
		if !ok {
			return fmt.Errorf("%s: %s: the process ended", c.name, command)
		}
		var e envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return fmt.Errorf("%s: %s: bad answer %.200q: %w", c.name, command, line, err)
		}
		if e.Error != "" {
			return fmt.Errorf("%s: %s: %s", c.name, command, e.Error)
		}
		if v != nil {
			return json.Unmarshal(e.Data, v)
		}
		return nil
	case <-t.C:
		return fmt.Errorf("%s: %s: no answer within %v", c.name, command, timeout)
	case <-ctx.Done():
		return fmt.Errorf("%s: %s: %w", c.name, command, ctx.Err())
	}
}

// stop asks the child to quit, and kills it if it has not within a few
// seconds. It waits for the process to end.
func (c *child) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		c.cmd.Wait()
		close(done)
	}()
	if err := c.call(ctx, "quit", 15*time.Second, nil); err != nil && !strings.Contains(err.Error(), "process ended") {
		fmt.Fprintf(os.Stderr, "hubbench: %v; killing it\n", err)
	}
	c.in.Close()
	select {
	case <-done:
		return
	case <-time.After(5 * time.Second):
	}
	c.cmd.Process.Kill()
	<-done
}

// kill ends the child at once: for an abort.
func (c *child) kill() { c.cmd.Process.Kill() }

// serveCommands is a child's side: it answers each command line on stdin
// with handle's reply, until "quit" (answered after handle ran) or the end
// of stdin.
func serveCommands(handle func(command string) (any, error)) {
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		command := strings.TrimSpace(sc.Text())
		v, err := handle(command)
		reply(out, v, err)
		if command == "quit" {
			return
		}
	}
	handle("quit") // the coordinator is gone
}

// reply writes one answer line.
func reply(out *bufio.Writer, v any, err error) {
	var e envelope
	if err != nil {
		e.Error = err.Error()
	} else if v != nil {
		b, jerr := json.Marshal(v)
		if jerr != nil {
			e.Error = jerr.Error()
		}
		e.Data = b
	}
	b, _ := json.Marshal(e)
	out.Write(b)
	out.WriteByte('\n')
	out.Flush()
}

// errUnknown answers a command the child does not know.
func errUnknown(command string) error { return errors.New("unknown command " + strconvQuote(command)) }

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
