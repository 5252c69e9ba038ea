package zipline

import (
	"strconv"
	"time"
)

// The stream commands. Each is defined once; go generate makes its Client
// and Batch methods (commands_gen.go). A blocking read (XRead or
// XReadGroup with Block) runs on a dedicated connection, as BLPOP does.

// Value returns the value of field, and whether the entry has it.
func (m XMessage) Value(field string) ([]byte, bool) {
	for _, fv := range m.Values {
		if fv.Field == field {
			return fv.Value, true
		}
	}
	return nil, false
}

// XAddArgs are XADD's stream, options and fields. The zero ID is "*": the
// server makes one. MaxLen or MinID trim the stream as the entry is added
// (Approx: "~", which trims whole nodes only, faster; Limit bounds the
// entries an approximate trim evicts).
type XAddArgs struct {
	Stream     string
	NoMkStream bool // do not create the stream: XAdd returns Nil if it is missing
	MaxLen     int64
	MinID      string
	Approx     bool
	Limit      int64
	ID         string
	Values     []FieldValue
}

// appendTrim appends a trim: MINID if minID is set, else MAXLEN maxLen,
// exact or approximate, and LIMIT. It refuses what the server would refuse
// or misread: a negative length or limit, both strategies at once, and a
// LIMIT on an exact trim (the server allows it only with ~, which bounds
// the work of an approximate one).
func appendTrim(command string, args []arg, maxLen int64, minID string, approx bool, limit int64) ([]arg, error) {
	bad := func(reason string) ([]arg, error) { return args, &ArgumentError{Command: command, Reason: reason} }
	switch {
	case maxLen < 0:
		return bad("MaxLen " + strconv.FormatInt(maxLen, 10) + " is negative")
	case maxLen > 0 && minID != "":
		return bad("MaxLen and MinID are two trim strategies: give one")
	case limit < 0:
		return bad("Limit " + strconv.FormatInt(limit, 10) + " is negative")
	case limit > 0 && !approx:
		return bad("Limit bounds an approximate trim only: set Approx too (the server refuses LIMIT with an exact trim)")
	}
	if minID != "" {
		args = append(args, str("MINID"))
	} else {
		args = append(args, str("MAXLEN"))
	}
	if approx {
		args = append(args, str("~"))
	} else {
		args = append(args, str("="))
	}
	if minID != "" {
		args = append(args, str(minID))
	} else {
		args = append(args, num(maxLen))
	}
	if limit > 0 {
		args = append(args, str("LIMIT"), num(limit))
	}
	return args, nil
}

// XAdd appends an entry to a stream and returns its ID.
//
//zipline:twins XAdd
func xaddCmd(a XAddArgs) (command[string], error) {
	args := make([]arg, 0, 9+2*len(a.Values))
	args = append(args, keyArg(a.Stream))
	if a.NoMkStream {
		args = append(args, str("NOMKSTREAM"))
	}
	switch {
	case a.MaxLen > 0 || a.MinID != "":
		var err error
		if args, err = appendTrim("XADD", args, a.MaxLen, a.MinID, a.Approx, a.Limit); err != nil {
			return define(decString, specXADD), err
		}
	case a.MaxLen < 0:
		return define(decString, specXADD), &ArgumentError{Command: "XADD", Reason: "MaxLen " +
			strconv.FormatInt(a.MaxLen, 10) + " is negative"}
	case a.Approx || a.Limit != 0:
		return define(decString, specXADD), &ArgumentError{Command: "XADD", Reason: "Approx and Limit shape a trim, " +
			"and there is none: set MaxLen or MinID (a zero MaxLen does not trim)"}
	}
	id := a.ID
	if id == "" {
		id = "*"
	}
	args = append(args, str(id))
	for _, fv := range a.Values {
		args = append(args, str(fv.Field), bin(fv.Value))
	}
	return define(decString, specXADD, args...), nil
}

// XLen returns the number of entries in the stream.
//
//zipline:twins XLen
func xlenCmd(stream string) command[int64] { return define(decInt, specXLEN, keyArg(stream)) }

// XRange returns the entries with IDs from start to stop inclusive ("-" and
// "+" for the ends; "(" before an ID excludes it).
//
//zipline:twins XRange
func xrangeCmd(stream, start, stop string) command[[]XMessage] {
	return define(decXMessages, specXRANGE, keyArg(stream), str(start), str(stop))
}

// XRangeN is XRange returning at most count entries.
//
//zipline:twins XRangeN
func xrangeNCmd(stream, start, stop string, count int64) command[[]XMessage] {
	return define(decXMessages, specXRANGE, keyArg(stream), str(start), str(stop), str("COUNT"), num(count))
}

// XRevRange is XRange from stop down to start ("+" then "-").
//
//zipline:twins XRevRange
func xrevRangeCmd(stream, stop, start string) command[[]XMessage] {
	return define(decXMessages, specXREVRANGE, keyArg(stream), str(stop), str(start))
}

// XRevRangeN is XRevRange returning at most count entries.
//
//zipline:twins XRevRangeN
func xrevRangeNCmd(stream, stop, start string, count int64) command[[]XMessage] {
	return define(decXMessages, specXREVRANGE, keyArg(stream), str(stop), str(start), str("COUNT"), num(count))
}

// XDel deletes entries and returns how many existed.
//
//zipline:twins XDel
func xdelCmd(stream string, ids ...string) command[int64] {
	return define(decInt, specXDEL, keyAnd(stream, ids)...)
}

// XTrimArgs say how XTrim trims: to MaxLen entries, or the entries before
// MinID. Approx and Limit are XAddArgs'.
type XTrimArgs struct {
	MaxLen int64
	MinID  string
	Approx bool
	Limit  int64
}

// XTrim trims the stream and returns how many entries it removed: to
// MinID if it is set, else to MaxLen entries (0: to nothing), exactly, or
// approximately with Approx, removing at most Limit entries then (0: the
// server's default bound). Options the server would refuse (a LIMIT on an
// exact trim, both strategies) are an *ArgumentError before sending.
//
//zipline:twins XTrim
func xtrimCmd(stream string, a XTrimArgs) (command[int64], error) {
	args, err := appendTrim("XTRIM", []arg{keyArg(stream)}, a.MaxLen, a.MinID, a.Approx, a.Limit)
	return define(decInt, specXTRIM, args...), err
}

// BlockForever makes XRead and XReadGroup wait without limit (BLOCK 0),
// bounded only by the caller's context.
const BlockForever time.Duration = -1

// XReadArgs are XREAD's streams, the ID after which each is read ("$": only
// new entries; "0": from the start), and options. Block zero does not
// block (unlike go-redis, where the zero Block waits forever); a positive
// Block waits that long for an entry, BlockForever without limit.
type XReadArgs struct {
	Streams []string
	IDs     []string // one per stream
	Count   int64
	Block   time.Duration
}

func (a *XReadArgs) args(prefix []arg) ([]arg, time.Duration, error) {
	if len(a.IDs) != len(a.Streams) {
		return nil, 0, &ArgumentError{Command: "XREAD", Reason: strconv.Itoa(len(a.Streams)) + " streams and " +
			strconv.Itoa(len(a.IDs)) + " IDs: one ID per stream"}
	}
	return streamArgs(prefix, a.Count, a.Block, a.Streams, a.IDs)
}

// streamArgs appends COUNT, BLOCK, STREAMS, the streams and the IDs, and
// returns how long the read may block (0: it does not).
func streamArgs(args []arg, count int64, block time.Duration, streams, ids []string) ([]arg, time.Duration, error) {
	if count > 0 {
		args = append(args, str("COUNT"), num(count))
	}
	var wait time.Duration
	switch {
	case block > 0:
		args = append(args, str("BLOCK"), num(max(millis(block), 1)))
		wait = block
	case block < 0:
		args = append(args, str("BLOCK"), num(0))
		wait = -1
	}
	args = append(args, str("STREAMS"))
	args = append(args, keyArgs(streams)...)
	for _, id := range ids {
		args = append(args, str(id))
	}
	return args, wait, nil
}

// XRead reads entries from streams after the given IDs. With Block it
// waits for one and returns Nil if none came in time.
//
//zipline:twins XRead
func xreadCmd(a XReadArgs) (command[[]XStream], error) {
	args, wait, err := a.args(make([]arg, 0, 5+2*len(a.Streams)))
	if wait != 0 {
		return defineBlocking(decXStreams, wait, specXREAD, args...), err
	}
	return define(decXStreams, specXREAD, args...), err
}

// XReadGroupArgs are XReadArgs for a consumer of a group (">" as an ID:
// entries never delivered to the group; an ID: this consumer's pending
// entries after it). NoAck does not add what is read to the pending list.
type XReadGroupArgs struct {
	Group, Consumer string
	Streams         []string
	IDs             []string
	Count           int64
	Block           time.Duration
	NoAck           bool
}

// XReadGroup reads entries as a consumer of a group. With Block it waits
// for one and returns Nil if none came in time.
//
//zipline:twins XReadGroup
func xreadGroupCmd(a XReadGroupArgs) (command[[]XStream], error) {
	if len(a.IDs) != len(a.Streams) {
		return define(decXStreams, specXREADGROUP), &ArgumentError{Command: "XREADGROUP", Reason: strconv.Itoa(len(a.Streams)) +
			" streams and " + strconv.Itoa(len(a.IDs)) + " IDs: one ID per stream"}
	}
	args := make([]arg, 0, 9+2*len(a.Streams))
	args = append(args, str("GROUP"), str(a.Group), str(a.Consumer))
	if a.NoAck {
		args = append(args, str("NOACK"))
	}
	args, wait, err := streamArgs(args, a.Count, a.Block, a.Streams, a.IDs)
	if wait != 0 {
		return defineBlocking(decXStreams, wait, specXREADGROUP, args...), err
	}
	return define(decXStreams, specXREADGROUP, args...), err
}

// XAck acknowledges entries of a group, and returns how many were pending.
//
//zipline:twins XAck
func xackCmd(stream, group string, ids ...string) command[int64] {
	args := make([]arg, 0, 2+len(ids))
	args = append(args, keyArg(stream), str(group))
	for _, id := range ids {
		args = append(args, str(id))
	}
	return define(decInt, specXACK, args...)
}

// XGroupCreate creates a consumer group that reads the stream from start
// ("$": new entries only; "0": all).
//
//zipline:twins XGroupCreate client=error
func xgroupCreateCmd(stream, group, start string) command[bool] {
	return define(decOK, specXGROUP_CREATE, keyArg(stream), str(group), str(start))
}

// XGroupCreateMkStream is XGroupCreate that creates the stream if missing.
//
//zipline:twins XGroupCreateMkStream client=error
func xgroupCreateMkStreamCmd(stream, group, start string) command[bool] {
	return define(decOK, specXGROUP_CREATE, keyArg(stream), str(group), str(start), str("MKSTREAM"))
}

// XGroupSetID sets the last ID a group has read.
//
//zipline:twins XGroupSetID client=error
func xgroupSetIDCmd(stream, group, start string) command[bool] {
	return define(decOK, specXGROUP_SETID, keyArg(stream), str(group), str(start))
}

// XGroupDestroy deletes a consumer group, and returns 1 if it existed.
//
//zipline:twins XGroupDestroy
func xgroupDestroyCmd(stream, group string) command[int64] {
	return define(decInt, specXGROUP_DESTROY, keyArg(stream), str(group))
}

// XGroupCreateConsumer creates a consumer in a group, and returns 1 if it
// is new.
//
//zipline:twins XGroupCreateConsumer
func xgroupCreateConsumerCmd(stream, group, consumer string) command[int64] {
	return define(decInt, specXGROUP_CREATECONSUMER, keyArg(stream), str(group), str(consumer))
}

// XGroupDelConsumer deletes a consumer from a group, and returns how many
// entries it had pending.
//
//zipline:twins XGroupDelConsumer
func xgroupDelConsumerCmd(stream, group, consumer string) command[int64] {
	return define(decInt, specXGROUP_DELCONSUMER, keyArg(stream), str(group), str(consumer))
}

// XPending summarizes a group's pending entries.
//
//zipline:twins XPending
func xpendingCmd(stream, group string) command[XPending] {
	return define(decXPending, specXPENDING, keyArg(stream), str(group))
}

// XPendingExtArgs select pending entries: those idle at least Idle, with
// IDs from Start to End ("-" to "+"), at most Count, of Consumer if set.
type XPendingExtArgs struct {
	Stream, Group string
	Idle          time.Duration
	Start, End    string
	Count         int64
	Consumer      string
}

// XPendingExt lists pending entries.
//
//zipline:twins XPendingExt
func xpendingExtCmd(a XPendingExtArgs) command[[]XPendingExt] {
	args := make([]arg, 0, 8)
	args = append(args, keyArg(a.Stream), str(a.Group))
	if a.Idle > 0 {
		args = append(args, str("IDLE"), num(millis(a.Idle)))
	}
	args = append(args, str(a.Start), str(a.End), num(a.Count))
	if a.Consumer != "" {
		args = append(args, str(a.Consumer))
	}
	return define(decXPendingExt, specXPENDING, args...)
}

// XClaimArgs claim entries for Consumer that have been idle at least
// MinIdle.
type XClaimArgs struct {
	Stream, Group, Consumer string
	MinIdle                 time.Duration
	Messages                []string // IDs
}

func (a *XClaimArgs) args() []arg {
	args := make([]arg, 0, 5+len(a.Messages))
	args = append(args, keyArg(a.Stream), str(a.Group), str(a.Consumer), num(millis(a.MinIdle)))
	for _, id := range a.Messages {
		args = append(args, str(id))
	}
	return args
}

// XClaim takes over pending entries, and returns those it claimed.
//
//zipline:twins XClaim
func xclaimCmd(a XClaimArgs) command[[]XMessage] {
	return define(decXMessages, specXCLAIM, a.args()...)
}

// XClaimJustID is XClaim returning IDs only (JUSTID).
//
//zipline:twins XClaimJustID
func xclaimJustIDCmd(a XClaimArgs) command[[]string] {
	return define(decStrings, specXCLAIM, append(a.args(), str("JUSTID"))...)
}

// XAutoClaimArgs claim for Consumer up to Count entries idle at least
// MinIdle, scanning from Start ("0-0" first, then each result's Next).
type XAutoClaimArgs struct {
	Stream, Group, Consumer string
	MinIdle                 time.Duration
	Start                   string
	Count                   int64
}

func (a *XAutoClaimArgs) args() []arg {
	args := make([]arg, 0, 8)
	args = append(args, keyArg(a.Stream), str(a.Group), str(a.Consumer), num(millis(a.MinIdle)), str(a.Start))
	if a.Count > 0 {
		args = append(args, str("COUNT"), num(a.Count))
	}
	return args
}

// XAutoClaim claims idle pending entries, scanning the pending list.
//
//zipline:twins XAutoClaim
func xautoClaimCmd(a XAutoClaimArgs) command[XAutoClaimed] {
	return define(decXAutoClaimed, specXAUTOCLAIM, a.args()...)
}

// XAutoClaimJustID is XAutoClaim returning IDs only (JUSTID).
//
//zipline:twins XAutoClaimJustID
func xautoClaimJustIDCmd(a XAutoClaimArgs) command[XAutoClaimed] {
	return define(decXAutoClaimed, specXAUTOCLAIM, append(a.args(), str("JUSTID"))...)
}

// XInfoStream describes a stream.
//
//zipline:twins XInfoStream
func xinfoStreamCmd(stream string) command[XInfoStream] {
	return define(decXInfoStream, specXINFO_STREAM, keyArg(stream))
}

// XInfoGroups describes a stream's consumer groups.
//
//zipline:twins XInfoGroups
func xinfoGroupsCmd(stream string) command[[]XInfoGroup] {
	return define(decXInfoGroups, specXINFO_GROUPS, keyArg(stream))
}

// XInfoConsumers describes a group's consumers.
//
//zipline:twins XInfoConsumers
func xinfoConsumersCmd(stream, group string) command[[]XInfoConsumer] {
	return define(decXInfoConsumers, specXINFO_CONSUMERS, keyArg(stream), str(group))
}

// XInfoStreamFull describes a stream with its entries, groups, consumers
// and pending lists (XINFO STREAM FULL, up to count entries and pending
// entries of each; 0: all), as the server's reply.
//
//zipline:twins XInfoStreamFull
func xinfoStreamFullCmd(stream string, count int64) command[Value] {
	return define(decValue, specXINFO_STREAM, keyArg(stream), str("FULL"), str("COUNT"), num(count))
}
