//go:build unix

package fanout

import (
	"net"
	"syscall"
)

// rawWriter writes to a socket without blocking, through its RawConn.
type rawWriter struct{ rc syscall.RawConn }

// rawTryWriter returns a TryWriter for TCP and Unix sockets, or nil.
func rawTryWriter(nc net.Conn) TryWriter {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rawWriter{rc}
}

func (w rawWriter) TryWrite(p []byte) (n int, err error) {
	werr := w.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, e := syscall.Write(int(fd), p[n:])
			if m > 0 {
				n += m
			}
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return true
			case e != nil:
				err = e
				return true
			case m <= 0:
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return n, err
}
