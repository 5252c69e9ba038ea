package zipline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Nil is returned when a key, field or element does not exist: the server
// replied with a null. Check for it with errors.Is(err, zipline.Nil).
var Nil = errors.New("zipline: nil")

// ErrTxFailed is returned by Exec on a transaction that the server aborted
// because a key watched with Watch changed.
var ErrTxFailed = errors.New("zipline: transaction aborted: a watched key changed")

// ErrNoDB is matched by the error of connecting to a server that refused
// to select Options.DB: it has no such database, or no numbered databases
// at all, as a cluster of Redis or of Valkey before 9.0, or of Valkey 9.0 and
// later whose cluster-databases is not above the DB.
var ErrNoDB = errors.New("zipline: the server has no database Options.DB")

// noDBError is a refused SELECT: it matches ErrNoDB and unwraps to the
// server's reply.
type noDBError struct{ reply error }

func (e noDBError) Error() string        { return "the server has no database Options.DB: " + e.reply.Error() }
func (e noDBError) Is(target error) bool { return target == ErrNoDB }
func (e noDBError) Unwrap() error        { return e.reply }

// ErrShardDown is matched by the error of a cluster request that waited
// Options.FailoverWait for a shard with no reachable primary. It matches
// ErrNotSent: nothing was sent, and the request can be tried again.
var ErrShardDown = fmt.Errorf("zipline: no primary serves the slot (%w)", ErrNotSent)

// ErrNotAllowed is matched by the *CommandError of a command the client
// refuses to send.
var ErrNotAllowed = errors.New("zipline: command not allowed")

// CommandError is a command refused by the client before anything was sent:
// it would change the state of the shared connection, would stall it, or
// cannot work with the client's settings. Reason says what to do instead.
type CommandError struct {
	Command string
	Reason  string
}

func (e *CommandError) Error() string {
	return "zipline: " + e.Command + ": " + e.Reason
}

// Is makes a CommandError match ErrNotAllowed and ErrNotSent.
func (e *CommandError) Is(target error) bool {
	return target == ErrNotAllowed || target == ErrNotSent
}

// ErrInvalidArgument is matched by the *ArgumentError of a command whose
// arguments the client refuses before sending it.
var ErrInvalidArgument = errors.New("zipline: invalid argument")

// ArgumentError is a command whose arguments have no meaning the server
// would accept (a negative expiry, two expiries, KEEPTTL where only SET
// takes it): refused by the client, before anything was sent, with what
// is wrong.
type ArgumentError struct {
	Command string
	Reason  string
}

func (e *ArgumentError) Error() string {
	return "zipline: " + e.Command + ": " + e.Reason
}

// Is makes an ArgumentError match ErrInvalidArgument and ErrNotSent.
func (e *ArgumentError) Is(target error) bool {
	return target == ErrInvalidArgument || target == ErrNotSent
}

// ServerError is an error reply from the server, such as
// "WRONGTYPE Operation against a key holding the wrong kind of value".
// Prefix is its first word ("ERR", "WRONGTYPE", "MOVED", "NOSCRIPT", ...).
type ServerError struct {
	Prefix  string
	Message string // the whole reply text, prefix included
}

func (e *ServerError) Error() string { return e.Message }

func serverError(v resp.Value) error {
	msg := string(v.Bytes())
	prefix, _, _ := strings.Cut(msg, " ")
	return &ServerError{Prefix: prefix, Message: msg}
}

// isServerError reports whether err is a ServerError with the given prefix.
func isServerError(err error, prefix string) bool {
	var se *ServerError
	return errors.As(err, &se) && se.Prefix == prefix
}

// notSentErr marks err (a context's, say) as matching ErrNotSent too: the
// request it ended never left the client.
func notSentErr(err error) error { return fmt.Errorf("%w (%w)", err, ErrNotSent) }

// CrossSlotError is a command (or transaction) whose keys hash to
// different slots of a cluster, which the server would refuse. Commands
// that can be split by slot (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH) are
// split instead; others need all their keys in one slot, for instance
// with a hash tag: "{user:7}:name" and "{user:7}:email". It matches
// ErrNotSent: nothing was sent.
type CrossSlotError struct {
	Command string
	Slots   []int32
}

func (e *CrossSlotError) Error() string {
	return fmt.Sprintf("zipline: %s: keys in different cluster slots %v: use a hash tag to put them in one", e.Command, e.Slots)
}

// Is makes a CrossSlotError match ErrNotSent.
func (e *CrossSlotError) Is(target error) bool { return target == ErrNotSent }

// named sets the command of an *ArgumentError a shared argument builder
// made without knowing it; any other error passes through.
func named(err error, command string) error {
	if ae, ok := err.(*ArgumentError); ok {
		ae.Command = command
	}
	return err
}

// ErrNotExecuted is returned by a Future whose Batch has not run yet.
var ErrNotExecuted = errors.New("zipline: batch not executed yet")

// ReplyLimitError is a reply larger than Options.ReplyLimits allow. The
// client skipped it without reading it into memory; only the command it
// answered failed, and the connection stays in use.
type ReplyLimitError struct {
	What  string // "bulk length" or "aggregate length"
	Size  int64  // what the reply announced
	Limit int64
}

func (e *ReplyLimitError) Error() string {
	return fmt.Sprintf("zipline: reply %s %d exceeds the limit of %d (Options.ReplyLimits)", e.What, e.Size, e.Limit)
}

// Is makes a ReplyLimitError match ErrReplyTooLarge.
func (e *ReplyLimitError) Is(target error) bool { return target == ErrReplyTooLarge }

// ErrReplyTooLarge is matched by every *ReplyLimitError.
var ErrReplyTooLarge = errors.New("zipline: reply exceeds the configured limits")

// ErrGap is matched by the *GapError that Messages yields when messages may
// have been lost: the subscriber connection was down (messages published
// meanwhile are gone: Redis pub/sub keeps nothing), or the subscription's
// buffer overflowed. Iteration goes on after it.
var ErrGap = errors.New("zipline: pub/sub messages may have been lost")

// GapError says why messages may have been lost.
type GapError struct {
	// Reason is "reconnected", "overflow" (the subscription's buffer) or
	// "moved" (a sharded channel's slot moved to another node).
	Reason string
	// Dropped counts the messages known to be lost, when known.
	Dropped int64
}

func (e *GapError) Error() string {
	if e.Dropped > 0 {
		return fmt.Sprintf("zipline: pub/sub gap (%s): %d messages lost", e.Reason, e.Dropped)
	}
	return "zipline: pub/sub gap (" + e.Reason + "): messages may have been lost"
}

// Is makes a GapError match ErrGap.
func (e *GapError) Is(target error) bool { return target == ErrGap }

// ErrSlowConsumer ends a subscription whose Overflow is CloseSubscription
// when its buffer is full.
var ErrSlowConsumer = errors.New("zipline: subscription closed: its consumer fell behind")

// TypeError reports a reply that cannot convert to the requested Go type.
type TypeError struct {
	Want string // the Go type asked for
	Got  string // the RESP type received
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("zipline: cannot read a %s reply as %s", e.Got, e.Want)
}

// NodeBoundError is a command refused on a Client from Dedicated on a
// cluster: that Client is one connection, to the node that served the slot
// of its first command's keys, and this command's keys are on a slot
// another node serves. Nothing was sent (it matches ErrNotSent).
type NodeBoundError struct {
	Bound     int32  // the slot that bound the connection
	BoundAddr string // its node
	Slot      int32  // the command's slot
}

func (e *NodeBoundError) Error() string {
	return fmt.Sprintf("zipline: this Client from Dedicated is one connection, to %s (which served slot %d when it was "+
		"bound); slot %d is served by another node: use the shared Client, or another Dedicated", e.BoundAddr, e.Bound, e.Slot)
}

// Is makes a NodeBoundError match ErrNotSent.
func (e *NodeBoundError) Is(target error) bool { return target == ErrNotSent }

// replyError turns a reply that is an error, or a stand-in for a reply
// over the configured limits, into the error its caller gets.
func (s *shared) replyError(v resp.Value) error {
	if !v.Type().Failed() {
		return nil
	}
	return s.errorOf(v)
}

// errorOf is replyError for a reply that is an error or an oversize
// stand-in.
func (s *shared) errorOf(v resp.Value) error {
	if v.IsError() {
		return serverError(v)
	}
	le := v.Oversize(s.limits)
	return &ReplyLimitError{What: le.What, Size: le.Size, Limit: le.Limit}
}
