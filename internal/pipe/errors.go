package pipe

import (
	"errors"
	"fmt"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Errors returned by Do. The root package re-exports them. Each failed
// request matches exactly one of ErrNotSent (never reached the server: safe
// to retry) and ErrConnLost (written, outcome unknown), unless it failed
// for its own context or for Close after it was written.
var (
	// ErrNotSent is matched (with errors.Is) by every error of a request that
	// never reached the server. Retrying such a request is always safe.
	ErrNotSent = errors.New("zipline: request not sent")
	// ErrClosed means the pipe was closed. It matches ErrNotSent when the
	// request was still queued.
	ErrClosed = errors.New("zipline: client closed")
	// ErrNotConnected means the connection is down and the request was not
	// written. It matches ErrNotSent.
	ErrNotConnected = errors.New("zipline: not connected")
	// ErrConnLost means the connection broke after the request was written:
	// the server may or may not have executed it, so it is not retried.
	ErrConnLost = errors.New("zipline: connection lost")
	// ErrPendingLimit means the bytes queued and in flight reached the
	// pipe's limit and the pipe is set to fail rather than wait. It matches
	// ErrNotSent.
	ErrPendingLimit = errors.New("zipline: too many bytes pending on the connection")
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
	if e.Reply.IsError() {
		return fmt.Sprintf("zipline: connection set-up: %s: %s", e.Command, e.Reply.Bytes())
	}
	return fmt.Sprintf("zipline: connection set-up: %s: unexpected %s", e.Command, e.Reply.Describe())
}

func (e *HandshakeError) Unwrap() error { return e.Err }
