//go:build !linux

package testkit

import (
	"net"
	"time"
)

// waitSent is a no-op where SIOCOUTQ is not available: an RST may then
// overtake the last bytes written.
func waitSent(*net.TCPConn, time.Duration) {}
