package zipline

import (
	"time"
)

// A command is one Redis command, built once by its definition (getCmd,
// setCmd, ...) and then run by a Client method, queued by a Batch method, or
// queued inside a Tx: the one place that says which command it is (its row
// of the spec, which routing, compression and the connection's rules read),
// which arguments are keys, which reply types can answer it and how its
// reply becomes a Go value.
type command[T any] struct {
	spec *commandSpec
	args []arg // after the name, and a subcommand's name
	dec  *decoder[T]
	// block is set on blocking commands (BLPOP, XREAD BLOCK...): how long
	// the server may hold the reply, negative for without limit; zero for
	// every other command. Blocking commands run on a dedicated connection,
	// whose I/O timeout is extended by it.
	block time.Duration
}

// define builds a command. Definitions call it with the arguments on the
// stack: once inlined into a Client or Batch method, nothing escapes.
func define[T any](dec *decoder[T], spec *commandSpec, args ...arg) command[T] {
	return command[T]{spec: spec, args: args, dec: dec}
}

// defineBlocking builds a command that may wait up to timeout server-side
// (0: without limit).
func defineBlocking[T any](dec *decoder[T], timeout time.Duration, spec *commandSpec, args ...arg) command[T] {
	c := command[T]{spec: spec, args: args, dec: dec, block: timeout}
	if timeout <= 0 {
		c.block = -1
	}
	return c
}
