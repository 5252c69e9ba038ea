//go:build linux || darwin || freebsd || netbsd || openbsd

package pipe

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// peeker looks at a socket without reading from it.
type peeker struct {
	raw syscall.RawConn
	fn  func(fd uintptr) bool // made once: a closure per peek would allocate
	n   int
	err error
	buf [1]byte
}

// newPeeker returns a peeker for nc's socket (under TLS, the socket
// beneath), or nil if nc has none: such connections are always read.
func newPeeker(nc net.Conn) *peeker {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	pk := &peeker{raw: raw}
	pk.fn = func(fd uintptr) bool {
		pk.n, _, pk.err = syscall.Recvfrom(int(fd), pk.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}
	return pk
}

// quiet reports whether nothing waits on the socket: no bytes, no end of
// stream, no error.
func (pk *peeker) quiet() bool {
	if err := pk.raw.Read(pk.fn); err != nil {
		return false
	}
	return errors.Is(pk.err, syscall.EAGAIN) || errors.Is(pk.err, syscall.EWOULDBLOCK)
}
