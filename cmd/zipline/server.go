package main

import (
	"flag"
	"fmt"
	"os/exec"
	"strings"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
)

// serverFlags are the -addr and -url flags of every command that talks to
// a server of the user's: -addr takes host:port, -url whatever
// zipline.ParseURL accepts; the two exclude each other.
type serverFlags struct {
	fs        *flag.FlagSet
	addr, url string
}

// urlFlagHelp is -url's help; a command may add to it.
const urlFlagHelp = "server `URL`, instead of -addr, as zipline.ParseURL reads it:\n" +
	"redis://[user[:password]@]host[:port][,host[:port]...][/db][?option=value...]\n" +
	"(several hosts: a cluster's seeds); rediss:// for TLS; valkey:// and valkeys:// alike;\n" +
	"unix://[user[:password]@]/path/to.sock[?db=N]"

// addServerFlags defines -addr (defaulting to defAddr, described by
// addrHelp) and -url (urlHelp) on fs.
func addServerFlags(fs *flag.FlagSet, defAddr, addrHelp, urlHelp string) *serverFlags {
	s := &serverFlags{fs: fs}
	fs.StringVar(&s.addr, "addr", defAddr, addrHelp)
	fs.StringVar(&s.url, "url", "", urlHelp)
	return s
}

// given reports whether the command line gave -addr or -url.
func (s *serverFlags) given() bool {
	set := s.set()
	return set["addr"] || set["url"]
}

// none reports whether the command line names no server: no -url, and
// -addr empty (for a command whose -addr defaults to empty, to start a
// local server).
func (s *serverFlags) none() bool { return !s.set()["url"] && s.addr == "" }

func (s *serverFlags) set() map[string]bool {
	set := map[string]bool{}
	s.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// options returns the client options -addr or -url give (with neither,
// -addr's default). Both given, or a URL ParseURL refuses, is a
// usageError; the error never quotes the URL, which may hold a password.
func (s *serverFlags) options() (zipline.Options, error) {
	switch set := s.set(); {
	case set["addr"] && set["url"]:
		return zipline.Options{}, usagef("give -url or -addr, not both")
	case !set["url"]:
		return zipline.Options{Addr: s.addr}, nil
	}
	o, err := zipline.ParseURL(s.url)
	if err != nil {
		return zipline.Options{}, usagef("-url: %w", err)
	}
	return o, nil
}

// describeServer names the server that o reaches, for messages: its
// address or addresses, never its credentials (nor the URL, whose query
// may hold a password too).
func describeServer(o zipline.Options) string {
	switch {
	case len(o.Addrs) > 0:
		return strings.Join(o.Addrs, ",")
	case o.Addr != "":
		return o.Addr
	}
	return "the server -url names"
}

// localServer returns addr if given; otherwise it starts a throwaway
// redis-server on a free loopback port and returns its address and a stop
// function.
func localServer(addr string) (string, *testbed.Server, func(), error) {
	if addr != "" {
		return addr, nil, func() {}, nil
	}
	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		return "", nil, nil, fmt.Errorf("starting a local redis-server (or pass -addr): %w", err)
	}
	fmt.Printf("started %s on %s (no persistence; stopped on exit)\n", serverVersion(srv), srv.Addr)
	return srv.Addr, srv, srv.Stop, nil
}

func serverVersion(srv *testbed.Server) string {
	bin, err := testbed.Binary(srv.Kind)
	if err != nil {
		return string(srv.Kind)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return bin
	}
	f := strings.Fields(string(out))
	for _, w := range f {
		if v, ok := strings.CutPrefix(w, "v="); ok {
			return fmt.Sprintf("%s %s", f[0], v)
		}
	}
	return bin
}
