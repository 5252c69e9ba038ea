package testkit

import (
	"net"
	"syscall"
	"time"
	"unsafe"
)

// waitSent waits, up to max, until the kernel has no unacknowledged bytes
// queued on c, so that an RST sent next cannot overtake them. The kernel
// offers no notification for this, so it polls (SIOCOUTQ).
func waitSent(c *net.TCPConn, max time.Duration) {
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		var n int32
		var errno syscall.Errno
		if err := rc.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCOUTQ, uintptr(unsafe.Pointer(&n)))
		}); err != nil || errno != 0 || n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
