package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"
)

// figures are one run's results.
type figures struct {
	Steps int // rotations or renewals done
	// InPlace counts the rotations after which every connection the
	// client had before was still open and authenticated as the new user
	// before the previous one was deleted; Stale, the connections still authenticated as the previous
	// user when it was deleted, over all rotations.
	InPlace, Stale int
	// Switch is, per rotation, the time from the provider's change until
	// every connection was the new user (-1: not within -auth-wait).
	Switch     []time.Duration
	OK         int // successful calls over the rotations or renewals
	Failed     int // failed calls over them
	Errors     map[string]int
	Wrong      int // GETs that did not return the value just set
	Reconnects int // connections the server saw the client open over them
	Conns      int // the client's connections when they began
	ConnsEnd   int // and at the end
	Closed     int // Conns + Reconnects - ConnsEnd: connections the client lost or closed
	Handshakes int // TLS handshakes the client made over them
	OpsPerSec  float64
	// Window is the longest time without any successful call, to within
	// a setget.Tick.
	Window time.Duration
}

// measure works out f's figures of the calls over the phase that began at
// from (since the load began) and ran to the end of ticks.
func measure(f *figures, ticks []int, failures []setget.Failure, from time.Duration) {
	f.Errors = map[string]int{}
	for _, fl := range failures {
		if fl.At >= from {
			f.Failed++
			f.Errors[fl.Class]++
		}
	}
	lo := min(int(from/setget.Tick), len(ticks))
	for _, n := range ticks[lo:] {
		f.OK += n
	}
	f.Window, _ = setget.LongestWindow(ticks[lo:])
	if d := time.Duration(len(ticks)-lo) * setget.Tick; d > 0 {
		f.OpsPerSec = float64(f.OK) / d.Seconds()
	}
}

// clientConns returns, for each connection in a CLIENT LIST reply whose
// name is name, its id and the user it is authenticated as.
func clientConns(list, name string) map[int64]string {
	conns := map[int64]string{}
	for _, line := range strings.Split(list, "\n") {
		var id int64
		user, named := "", false
		for _, field := range strings.Fields(line) {
			switch k, v, _ := strings.Cut(field, "="); k {
			case "id":
				id, _ = strconv.ParseInt(v, 10, 64)
			case "name":
				named = v == name
			case "user":
				user = v
			}
		}
		if named {
			conns[id] = user
		}
	}
	return conns
}

// stale counts the connections not authenticated as user.
func stale(conns map[int64]string, user string) int {
	n := 0
	for _, u := range conns {
		if u != user {
			n++
		}
	}
	return n
}

// inPlace reports whether every connection of before is still open in
// after and authenticated as user: switched without a reconnect.
func inPlace(before, after map[int64]string, user string) bool {
	for id := range before {
		if after[id] != user {
			return false
		}
	}
	return true
}
