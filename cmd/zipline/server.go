package main

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/ziplinekv/zipline/testbed"
)

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
