package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// openClient opens a Client the test closes when it ends.
func openClient(t *testing.T, opts zipline.Options) *zipline.Client {
	t.Helper()
	c, err := zipline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// openStore opens the namespace spec (as -ns takes it) on c.
func openStore(t *testing.T, c *zipline.Client, spec string) *layout.Store {
	t.Helper()
	ns, err := parseNamespace(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := layout.New(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// randomRecords are the corpus's real JSON records of random.json's users
// (100-500 B).
func randomRecords(t *testing.T) [][]byte {
	t.Helper()
	real, err := corpus.RealJSON()
	if err != nil {
		t.Fatal(err)
	}
	return real["random"]
}

// stdoutOf runs fn with os.Stdout sent to a pipe and returns what it wrote.
func stdoutOf(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	err = fn()
	os.Stdout = saved
	w.Close()
	return string(<-done), err
}

// runDemo and runMigrate run a command with args as the dispatcher does,
// returning its error.
func runDemo(ctx context.Context, args []string) error { return cmdDemo.exec(ctx, "demo", args) }

func runMigrate(ctx context.Context, args []string) error {
	return cmdMigrate.exec(ctx, "migrate", args)
}

// runCLI runs the command line args in process and returns its exit
// status, standard output and standard error.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// runNothing makes every command fail the test if it runs, until the test
// ends: its flags stay defined, so that help shows them and the flag
// package checks them, but what it runs is replaced.
func runNothing(t *testing.T) {
	var walk func(cs []*command)
	walk = func(cs []*command) {
		for _, c := range cs {
			walk(c.subs)
			if c.flags == nil {
				continue
			}
			define := c.flags
			c.flags = func(fs *flag.FlagSet) func(context.Context, []string) error {
				define(fs)
				return func(context.Context, []string) error {
					t.Errorf("%s ran", c.name)
					return errors.New("ran")
				}
			}
			t.Cleanup(func() { c.flags = define })
		}
	}
	walk(commands)
}

// Every way of asking for help prints the usage on stdout, nothing on
// stderr, and exits 0, without running the command (or starting a
// server).
func TestHelp(t *testing.T) {
	runNothing(t)
	for _, tc := range []struct {
		args []string
		want []string // in stdout
	}{
		{[]string{"help"}, []string{"usage: zipline <command>", "demo", "migrate", "bench", "fanout", "version"}},
		{[]string{"-h"}, []string{"usage: zipline <command>"}},
		{[]string{"-help"}, []string{"usage: zipline <command>"}},
		{[]string{"--help"}, []string{"usage: zipline <command>"}},
		{[]string{"help", "demo"}, []string{"usage: zipline demo [flags]", "-addr", "-url", "-cluster"}},
		{[]string{"demo", "-h"}, []string{"usage: zipline demo [flags]", "-addr", "-url"}},
		{[]string{"demo", "-c", "8", "--help"}, []string{"usage: zipline demo [flags]"}},
		{[]string{"help", "migrate"}, []string{"usage: zipline migrate -from SPEC -to SPEC", "-addr", "-url", "ZIPLINE_PASSWORD", "prefix="}},
		{[]string{"migrate", "-h"}, []string{"usage: zipline migrate -from SPEC -to SPEC"}},
		{[]string{"migrate", "-help"}, []string{"usage: zipline migrate -from SPEC -to SPEC"}},
		{[]string{"migrate", "-from", "prefix=a:", "--help"}, []string{"usage: zipline migrate -from SPEC -to SPEC"}},
		{[]string{"help", "bench"}, []string{"usage: zipline bench <suite> [flags]", "suites:", "layouts", "compbench"}},
		{[]string{"bench", "-h"}, []string{"usage: zipline bench <suite> [flags]", "layouts"}},
		{[]string{"bench", "--help"}, []string{"usage: zipline bench <suite> [flags]"}},
		{[]string{"help", "bench", "layouts"}, []string{"usage: zipline bench layouts [flags]", "-quick", "no -addr or -url"}},
		{[]string{"bench", "layouts", "-h"}, []string{"usage: zipline bench layouts [flags]", "-quick"}},
		{[]string{"bench", "layouts", "--help"}, []string{"usage: zipline bench layouts [flags]"}},
		{[]string{"help", "fanout"}, []string{"usage: zipline fanout [flags]", "-addr", "-url", "-allow"}},
		{[]string{"fanout", "-h"}, []string{"usage: zipline fanout [flags]"}},
		{[]string{"help", "version"}, []string{"usage: zipline version"}},
		{[]string{"version", "-h"}, []string{"usage: zipline version"}},
		{[]string{"help", "help"}, []string{"usage: zipline help [command [suite]]"}},
		{[]string{"help", "-h"}, []string{"usage: zipline help [command [suite]]"}},
		{[]string{"help", "migrate", "-h"}, []string{"usage: zipline migrate -from SPEC -to SPEC"}},
		{[]string{"demo", "extra", "-h"}, []string{"usage: zipline demo [flags]"}},
		{[]string{"bench", "layouts", "extra", "--help"}, []string{"usage: zipline bench layouts [flags]"}},
		{[]string{"version", "extra", "-help"}, []string{"usage: zipline version"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 0 || stderr != "" {
				t.Errorf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// A command line zipline cannot run exits 2 with one line on stderr that
// names the problem and points to the help, and prints nothing on stdout.
// None of these reaches a server.
func TestUsageErrors(t *testing.T) {
	const secret = "s3cret"
	for _, tc := range []struct {
		args []string
		want []string // in the line on stderr
	}{
		{[]string{"nope"}, []string{`zipline: unknown command "nope"`, `run "zipline help"`}},
		{[]string{"-nope"}, []string{"zipline: flag provided but not defined: -nope", `run "zipline help"`}},
		{[]string{"--version=maybe"}, []string{"invalid boolean value"}},
		{[]string{"help", "nope"}, []string{`zipline help: unknown command "nope"`, `run "zipline help"`}},
		{[]string{"help", "bench", "nope"}, []string{`unknown command "bench nope"`}},
		{[]string{"version", "extra"}, []string{`zipline version: unexpected argument "extra"`}},
		{[]string{"demo", "-nope"}, []string{"zipline demo: flag provided but not defined: -nope", `run "zipline help demo"`}},
		{[]string{"demo", "-c", "many"}, []string{`invalid value "many" for flag -c`}},
		{[]string{"demo", "-addr"}, []string{"flag needs an argument: -addr"}},
		{[]string{"demo", "extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"demo", "extra", "--", "-h"}, []string{`unexpected argument "extra"`}},
		{[]string{"demo", "redis://app:" + secret + "@127.0.0.1:1"}, []string{`unexpected argument "redis://app:xxxxx@127.0.0.1:1"`}},
		{[]string{"demo", "-failover"}, []string{"-failover needs -cluster"}},
		{[]string{"demo", "-cluster", "-url", "redis://127.0.0.1:1"}, []string{"-cluster starts its own cluster"}},
		{[]string{"demo", "-c", "0"}, []string{"need -c ≥ 1"}},
		{[]string{"demo", "-url", "redis://127.0.0.1:1", "-addr", "127.0.0.1:1"}, []string{"give -url or -addr, not both", `run "zipline help demo"`}},
		{[]string{"demo", "-addr", "127.0.0.1:1", "-url", "redis://app:" + secret + "@127.0.0.1:1"}, []string{"give -url or -addr, not both"}},
		{[]string{"demo", "-url", "http://app:" + secret + "@127.0.0.1:1"}, []string{"zipline demo: -url:", "invalid URL scheme"}},
		{[]string{"demo", "-url", "redis://app:" + secret + "@127.0.0.1:1/x"}, []string{"-url:", "database number"}},
		{[]string{"migrate", "-nope"}, []string{"zipline migrate: flag provided but not defined: -nope", `run "zipline help migrate"`}},
		{[]string{"migrate", "-from", "prefix=a:"}, []string{"migrate needs -from and -to"}},
		{[]string{"migrate", "-from", "nope", "-to", "prefix=b:"}, []string{"-from:", "not key=value"}},
		{[]string{"migrate", "-url", "redis://127.0.0.1:1", "-addr", "127.0.0.1:1", "-from", "prefix=a:", "-to", "prefix=b:"},
			[]string{"give -url or -addr, not both", `run "zipline help migrate"`}},
		{[]string{"migrate", "-url", "redis://:" + secret + "@127.0.0.1:1?nope=1", "-from", "prefix=a:", "-to", "prefix=b:"},
			[]string{"unknown URL option nope"}},
		{[]string{"bench", "nope"}, []string{`zipline bench: unknown suite "nope"`, `run "zipline help bench"`}},
		{[]string{"bench", "-nope"}, []string{"zipline bench: flag provided but not defined: -nope"}},
		{[]string{"bench", "layouts", "-addr", "127.0.0.1:1"}, []string{"zipline bench layouts: flag provided but not defined: -addr",
			`run "zipline help bench layouts"`}},
		{[]string{"bench", "layouts", "-kind", "mysql"}, []string{`-kind "mysql": want redis, valkey or redis,valkey`}},
		{[]string{"fanout", "-nope"}, []string{"zipline fanout: flag provided but not defined: -nope"}},
		{[]string{"fanout", "-url", "redis://127.0.0.1:1", "-addr", "127.0.0.1:1"}, []string{"give -url or -addr, not both", `run "zipline help fanout"`}},
		{[]string{"fanout", "-compression", "gzip"}, []string{`-compression "gzip"`}},
		{[]string{"fanout", "-allow", "news.["}, []string{`-allow "news.["`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not one line:\n%s", stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q: %s", want, stderr)
				}
			}
			if strings.Contains(stderr, secret) {
				t.Errorf("stderr shows the password: %s", stderr)
			}
		})
	}
}

// zipline without a command, or bench without a suite, prints the list to
// choose from on stderr and exits 2, as the go command does.
func TestMissingCommand(t *testing.T) {
	runNothing(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: zipline <command>"},
		{[]string{"bench"}, "usage: zipline bench <suite>"},
	} {
		t.Run(strings.Join(append([]string{"zipline"}, tc.args...), " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant 2, nothing and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// A command that fails while it runs exits 1 with its error on stderr, in
// which a URL's password never shows.
func TestRunErrorExitsOne(t *testing.T) {
	const secret = "s3cret"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing listens there once ln is closed
	ln.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "layouts", "-render", t.TempDir() + "/missing.json"}, "missing.json"},
		{[]string{"demo", "-addr", closed}, "connection refused"},
		{[]string{"migrate", "-url", "redis://app:" + secret + "@" + closed, "-from", "prefix=a:", "-to", "prefix=b:"}, "connection refused"},
		{[]string{"fanout", "-url", "redis://:" + secret + "@" + closed, "-listen", "127.0.0.1:0"}, "connection refused"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "zipline: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing and an error naming %q", code, stdout, stderr, tc.want)
			}
			if strings.Contains(stderr, secret) {
				t.Errorf("stderr shows the password: %s", stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "zipline ") || strings.Count(stdout, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and one line of version", code, stdout, stderr)
			}
		})
	}
}

func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"release", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}}, true,
			"zipline v1.2.0, built with go1.26.0"},
		{"pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128082625-b598e5bec6a6+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "b598e5bec6a6"}, {Key: "vcs.modified", Value: "true"}}}, true,
			"zipline v0.0.0-20261128082625-b598e5bec6a6+dirty"},
		{"work tree", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"},
				{Key: "vcs.modified", Value: "true"}}}, true,
			"zipline (devel) 0123abcd (modified), built with go1.26.0"},
		{"clean tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"}}}, true,
			"zipline (devel) 0123abcd"},
		{"no version", &debug.BuildInfo{}, true, "zipline (devel)"},
		{"no build info", nil, false, "zipline (unknown version: no build information)"},
	} {
		if got := versionLine(tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// -addr and -url, as every command that talks to a server reads them.
func TestServerFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		defAddr  string
		want     zipline.Options
		given    bool
		usageErr string
	}{
		{args: nil, defAddr: zipline.DefaultAddr, want: zipline.Options{Addr: zipline.DefaultAddr}},
		{args: nil, want: zipline.Options{}},
		{args: []string{"-addr", "h:1"}, want: zipline.Options{Addr: "h:1"}, given: true},
		{args: []string{"-url", "redis://app:pw@h:2/3"}, defAddr: zipline.DefaultAddr, given: true,
			want: zipline.Options{Network: "tcp", Addr: "h:2", Username: "app", Password: "pw", DB: 3}},
		{args: []string{"-url", "valkey://h:2,h:3"}, given: true, want: zipline.Options{Network: "tcp", Addrs: []string{"h:2", "h:3"}}},
		{args: []string{"-url", "unix:///tmp/r.sock"}, given: true, want: zipline.Options{Network: "unix", Addr: "/tmp/r.sock"}},
		{args: []string{"-addr", "h:1", "-url", "redis://h:2"}, given: true, usageErr: "give -url or -addr, not both"},
		{args: []string{"-url", "redis://:pw@h:99999"}, given: true, usageErr: `-url: zipline: invalid port "99999" in the URL`},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		s := addServerFlags(fs, tc.defAddr, "", "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o, err := s.options()
		var ue usageError
		switch {
		case s.given() != tc.given:
			t.Errorf("%q: given() = %v", tc.args, !tc.given)
		case tc.usageErr != "":
			if !errors.As(err, &ue) || err.Error() != tc.usageErr {
				t.Errorf("%q: error %v, want the usage error %q", tc.args, err, tc.usageErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case o.Network != tc.want.Network || o.Addr != tc.want.Addr || strings.Join(o.Addrs, ",") != strings.Join(tc.want.Addrs, ",") ||
			o.Username != tc.want.Username || o.Password != tc.want.Password || o.DB != tc.want.DB:
			t.Errorf("%q: %+v, want %+v", tc.args, o, tc.want)
		}
	}
}

// The demo's compression section dials by address alone: only when that
// reaches the same server as the options.
func TestDialAddr(t *testing.T) {
	for _, tc := range []struct {
		url, want string
	}{
		{"redis://h:1", "h:1"},
		{"redis://h:1?protocol=2&client_name=x", "h:1"},
		{"redis://h:1,h:2", "h:1"},
		{"redis://:pw@h:1", ""},
		{"redis://app@h:1", ""},
		{"redis://h:1/2", ""},
		{"rediss://h:1", ""},
		{"unix:///tmp/r.sock", ""},
	} {
		o, err := zipline.ParseURL(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := dialAddr(o); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.url, got, tc.want)
		}
	}
	if got := dialAddr(zipline.Options{Addr: "h:1"}); got != "h:1" {
		t.Errorf("-addr h:1: %q", got)
	}
}

func TestRedactURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://app:pw@h:1/2", "redis://app:xxxxx@h:1/2"},
		{`"rediss://:p@ss@h:1,h:2?db=1"`, `"rediss://:xxxxx@h:1,h:2?db=1"`},
		{"dial redis://app@h:1: refused; unix://u:pw@/tmp/s", "dial redis://app@h:1: refused; unix://u:xxxxx@/tmp/s"},
		{"redis://h:26379?master_name=m&password=pw&db=1", "redis://h:26379?master_name=m&password=xxxxx&db=1"},
		{`unknown command "nope"`, `unknown command "nope"`},
	} {
		if got := redactURLs(tc.in); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// childArgsEnv carries a zipline command line for a child process to run,
// its words separated by \x1f.
const childArgsEnv = "ZIPLINE_TEST_CHILD"

// TestChildProcess is the child of the tests that kill a command part-way
// (TestMigrateKilledAndResumed, TestDictRotateKilled): it runs the command
// line childArgsEnv carries and exits with its status.
func TestChildProcess(t *testing.T) {
	args := os.Getenv(childArgsEnv)
	if args == "" {
		t.Skip("runs as the child of the tests that kill a command part-way")
	}
	os.Exit(run(context.Background(), strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// startChild runs "zipline args..." in a child process (this test binary,
// as TestChildProcess), its output going to out.
func startChild(t *testing.T, out io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^TestChildProcess$")
	child.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\x1f"))
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	return child
}
