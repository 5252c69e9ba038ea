package zipline

//go:generate go run ./internal/cmdspec/gen

import (
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/cmdspec"
)

// commandSpec is everything zipline knows of one command or subcommand,
// in one row: what the servers say of it (arity, flags, key specs, the
// version that added it on each), read by `make spec` into
// internal/cmdspec/servers.json and generated into spec_gen.go, and what
// the overlay adds (spec_overlay.go): where its stored values are, where a
// blocking command's timeout is, how a cluster split merges, whether the
// shared connection may carry it.
//
// A command carries its row from when it is built: a typed command names
// it (specGET), Do looks it up once by name. Routing, replica reads,
// dedicated connections, compression and refusals read the row; nothing is
// looked up by name at send time.
type commandSpec struct {
	name string // as sent: "GET", and "OBJECT" for OBJECT ENCODING
	sub  string // a subcommand's name as sent ("ENCODING"), else ""
	info cmdspec.Command
	// servers is, per server kind the spec was read from (specServers),
	// the version that added the command there ("0.0.0" if its docs do
	// not say), or "" if that server does not have it.
	servers [serverKinds]string
	subs    map[string]*commandSpec // a container's subcommands, by name
	// partial: some server the spec was read from lacks the command, so a
	// server may not have it (see missingOn).
	partial bool
	commandOverlay
}

// commandOverlay is what the servers do not say of a command, written by
// hand in spec_overlay.go. The zero overlay is a plain command.
type commandOverlay struct {
	// class: the shared connection refuses connection-state and forbidden
	// commands. The zero class is plain, or blocking for a command the
	// servers flag "blocking".
	class connClass
	// block says where a blocking command's timeout is.
	block blockArg
	// value says where the command carries stored values (compression).
	value valueSpec
	// whole: a command the servers would let a cluster client split by
	// slot (request_policy multi_shard) whose meaning spans all its keys
	// (MSETNX, MSETEX: set all or none), refused across slots instead.
	whole bool
	// since is the version that added the command on servers of each kind
	// newer than the spec's (HSETEX: Redis 8.0, where the spec's Redis 7.0
	// has none), so that a server without it is told which has it.
	since [serverKinds]string
}

// serverKind is a kind of server: the spec was read from one of each.
type serverKind uint8

const (
	serverRedis serverKind = iota
	serverValkey
	serverKinds
)

func (k serverKind) String() string { return [...]string{"Redis", "Valkey"}[k] }

// serverVersion is a server's kind and version, as HELLO reports them.
type serverVersion struct {
	kind    serverKind
	version string
}

// known reports whether the server said what it is.
func (v serverVersion) known() bool { return v.version != "" }

// spec returns the row of the command name (upper case) with args, a
// container's subcommand resolved from args[0], and the arguments after
// the subcommand's name; for a command the spec does not have (a module's,
// a newer server's), a row of its own with nothing but its name.
func lookupSpec(name string, args []arg) (*commandSpec, []arg) {
	s := commandSpecs[name]
	if s == nil {
		return &commandSpec{name: strings.Clone(name)}, args
	}
	if s.subs != nil && len(args) > 0 {
		var buf [32]byte
		if sub := s.subs[string(upper(buf[:0], args[0].text()))]; sub != nil {
			return sub, args[1:]
		}
	}
	return s, args
}

// fullName is the command's name for errors and logs: "GET", "OBJECT ENCODING".
func (s *commandSpec) fullName() string {
	if s.sub == "" {
		return s.name
	}
	return s.name + " " + s.sub
}

// classFor returns the command's class with these arguments: a command
// that blocks only with an option (XREAD BLOCK) is plain without it.
func (s *commandSpec) classFor(args []arg) connClass {
	c := s.class
	if c == classPlain && s.info.Has(cmdspec.Blocking) {
		c = classBlocking
	}
	if c == classBlocking && s.block.option != nil && s.block.option.in(args) < 0 {
		c = classPlain
	}
	return c
}

// readOnly reports whether a replica may serve the command.
func (s *commandSpec) readOnly() bool { return s.info.Has(cmdspec.ReadOnly) }

// missingOn says, when the server is known not to have the command, which
// versions do; "" when it has it, or may.
func (s *commandSpec) missingOn(v serverVersion) string {
	if !v.known() || s.servers == [serverKinds]string{} && s.since == [serverKinds]string{} {
		return "" // a command the spec does not know: the server decides
	}
	since := s.servers[v.kind]
	if since == "" {
		since = s.since[v.kind]
		if since == "" && versionBelow(specServers[v.kind].version, v.version) {
			return "" // newer than the spec's server: it may have it
		}
	}
	if since != "" && !versionBelow(v.version, since) {
		return ""
	}
	var has []string
	for k := range serverKinds {
		switch {
		case s.servers[k] != "" && s.servers[k] != "0.0.0":
			has = append(has, k.String()+" "+s.servers[k])
		case s.servers[k] != "":
			has = append(has, k.String()+" "+specServers[k].version)
		case s.since[k] != "":
			has = append(has, k.String()+" "+s.since[k])
		}
	}
	return strings.Join(has, " and ")
}

// versionBelow reports whether version a is older than b ("7.0.15" <
// "7.4.0"), comparing dotted numbers; what does not parse is 0.
func versionBelow(a, b string) bool {
	for a != "" || b != "" {
		var x, y string
		x, a, _ = strings.Cut(a, ".")
		y, b, _ = strings.Cut(b, ".")
		n, _ := strconv.Atoi(x)
		m, _ := strconv.Atoi(y)
		if n != m {
			return n < m
		}
	}
	return false
}

// blockArg says where a blocking command's timeout is, for the I/O
// timeout of its connection. The zero blockArg: without limit.
type blockArg struct {
	at     int           // 1: the first argument; -1: the last
	option *option       // or: the value of this option (XREAD BLOCK)
	unit   time.Duration // the timeout's unit
}

// firstArg and lastArg place a blocking command's timeout.
func firstArg(unit time.Duration) blockArg { return blockArg{at: 1, unit: unit} }
func lastArg(unit time.Duration) blockArg  { return blockArg{at: -1, unit: unit} }

// timeout reads how long the command may wait server-side. Zero means
// without limit, and so does an argument that does not parse (the
// caller's context still bounds the call).
func (b blockArg) timeout(args []arg) time.Duration {
	var a *arg
	switch {
	case b.option != nil:
		if i := b.option.in(args); i >= 0 && i+1 < len(args) {
			a = &args[i+1]
		}
	case b.at > 0 && b.at <= len(args):
		a = &args[b.at-1]
	case b.at < 0 && len(args) >= -b.at:
		a = &args[len(args)+b.at]
	}
	if a == nil {
		return 0
	}
	f, err := strconv.ParseFloat(a.text(), 64)
	if err != nil || f <= 0 || f > float64(1<<63-1)/float64(b.unit) {
		return 0
	}
	return time.Duration(f * float64(b.unit))
}

// mergeKind says how the parts of a split command merge.
type mergeKind uint8

// merge says how the parts of the command split by slot on a cluster merge
// back, from the servers' policies: a multi_shard command's replies put
// back in the keys' order (MGET), added up (agg_sum: DEL, EXISTS), or OK
// when every part is (all_succeeded: MSET). mergeNone: it cannot be split.
func (s *commandSpec) merge() mergeKind {
	if s.info.Request != cmdspec.MultiShard || s.whole {
		return mergeNone
	}
	switch s.info.Response {
	case cmdspec.ResponseDefault:
		return mergeArray
	case cmdspec.AggSum:
		return mergeSum
	case cmdspec.AllSucceeded:
		return mergeOK
	}
	return mergeNone
}

const (
	mergeNone  mergeKind = iota
	mergeArray           // MGET: the parts' arrays, put back in the keys' order
	mergeSum             // DEL, UNLINK, EXISTS, TOUCH: the parts' counts added up
	mergeOK              // MSET: OK when every part is
)

// Command classes, from a command's row: whether the shared connection
// may carry it.
type connClass uint8

const (
	classPlain connClass = iota
	// classBlocking commands hold the connection until data arrives, which
	// would stall every other caller of a shared connection: they run on a
	// dedicated connection from the pool.
	classBlocking
	// classConnState commands change the connection's state (database,
	// credentials, transactions, tracking); on the shared connection that
	// would leak into every caller, so they are only allowed on a Client
	// from Dedicated or Watch.
	classConnState
	// classForbidden commands switch the connection into another protocol
	// mode (pub/sub, MONITOR, replication) or end it; they are never sent.
	classForbidden
)
