package pipe

import (
	"errors"
	"fmt"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Errors returned by Do. The root package re-exports them.
var (
	// ErrNotSent is matched (with errors.Is) by every error of a request that
	// never reached the server. Retrying such a request is always safe.
	ErrNotSent = errors.New("zipline: request not sent")
	// ErrClosed means the pipe was closed. It matches ErrNotSent when the
	// request was still queued.
	ErrClosed = errors.New("zipline: client closed")
	// ErrNotConnected means the connection is down and the request was not
	// queued. It matches ErrNotSent.
	ErrNotConnected = errors.New("zipline: not connected")
	// ErrConnLost means the connection broke after the request was written:
	// the server may or may not have executed it, so it is not retried.
	ErrConnLost = errors.New("zipline: connection lost")
)

// notSent marks err as matching ErrNotSent as well as itself.
func notSent(err error) error {
	return fmt.Errorf("%w (%w)", err, ErrNotSent)
}

// HandshakeError reports a connection set-up command (HELLO, AUTH, SELECT,
// CLIENT SETNAME) that the server refused or that could not complete.
type HandshakeError struct {
	Command string
	Reply   resp.Value // the error reply, if the server answered
	Err     error      // the I/O error, if it did not
}

func (e *HandshakeError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("zipline: connection set-up: %s: %v", e.Command, e.Err)
	}
	return fmt.Sprintf("zipline: connection set-up: %s: %s", e.Command, e.Reply.Bytes())
}

func (e *HandshakeError) Unwrap() error { return e.Err }
