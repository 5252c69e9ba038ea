package difftest

// One generated command, in both clients' forms.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// family is a compression family: a command that works on stored bytes is
// refused by zipline while its family is compressed (compression_plan.go).
type family uint8

const (
	famNone family = iota
	famStrings
	famHashes
	famLists
	// famStringsNotLists: refused while compression is on and lists are
	// not compressed (SORT ... GET pattern STORE would store compressed
	// values in a list whose reads do not expand them).
	famStringsNotLists
)

// storeRefusal is the family a SORT that also STOREs is refused under:
// its refusal as a plain SORT (refuse, for its BY), and, when a GET reads
// stored values, the refusal of copying them into an uncompressed list.
func storeRefusal(refuse family, by string, gets []string) family {
	if !slices.ContainsFunc(gets, func(p string) bool { return p != "#" }) {
		return refuse
	}
	switch by {
	case "*", "":
		return famStrings // refused whatever the Lists family (BY *: always; no BY: with Lists, then for the store without)
	}
	return famStringsNotLists
}

// goCmdable is what a go-redis command runs on: a *redis.Client, the
// *redis.Tx of a Watch, or a Pipeliner (where it is queued).
type goCmdable interface {
	redis.Cmdable
	Process(ctx context.Context, cmd redis.Cmder) error
}

// op is one command: how zipline runs it (directly, or queued in a Batch),
// how go-redis runs it, and how the replies compare.
type op struct {
	name string   // command name: discrepancies are grouped by it
	desc string   // the command line, for reports
	keys []string // the keys it touches

	// refuse: zipline refuses the command while this family is compressed
	// and one of its keys is in the compressed scope (not kept plain by the
	// mode's rules: README, "Transparent compression"; compression_plan.go), and it
	// is then not sent to go-redis's server either. With refuseAlways,
	// whatever its keys (SORT, which compares values it finds by pattern).
	refuse       family
	refuseAlways bool
	// moves: the command moves a value of this family from its first key
	// to its second, which zipline refuses from the compressed scope into
	// a key kept plain.
	moves family
	// invalid: the arguments are ones the server or go-redis refuses, or
	// go-redis would drop in silence, which zipline refuses before sending
	// with an *ArgumentError; go-redis's side is not run either.
	invalid bool
	// solo: never queued in a Batch, Tx or Watch (random results that need
	// reconciling, or iterations).
	solo bool

	z  func(ctx context.Context, c *zipline.Client) reply
	zq func(b *zipline.Batch) func() reply // nil: no Batch form

	g  func(ctx context.Context, c goCmdable) redis.Cmder // queueable form
	gd func(ctx context.Context, c goCmdable) reply       // direct-only form (iterations)
	// gr renders g's result; nil means gReply(cmd, unordered, pairs).
	gr               func(redis.Cmder) reply
	unordered, pairs bool

	// same, if set, replaces equality of the two replies.
	same func(ctx context.Context, r *runner, z, g reply) bool
	// after runs once both sides have run and compared (SPOP's reconciling).
	after func(ctx context.Context, r *runner)
	// before runs before either side runs a solo command (what the
	// servers hold then: a lexicographic range's key).
	before func(ctx context.Context, r *runner)
}

func (o *op) queueable() bool { return o.zq != nil && o.g != nil && !o.solo }

func (o *op) goReply(c redis.Cmder) reply {
	if o.gr != nil {
		return o.gr(c)
	}
	return gReply(c, o.unordered, o.pairs)
}

// runGo runs the command directly on c.
func (o *op) runGo(ctx context.Context, c goCmdable) reply {
	if o.gd != nil {
		return o.gd(ctx, c)
	}
	return o.goReply(o.g(ctx, c))
}

// typed fills o's zipline side from a Client method and its Batch twin,
// rendering a result with conv.
func typed[T any](o *op, conv func(T) string,
	d func(ctx context.Context, c *zipline.Client) (T, error), q func(b *zipline.Batch) *zipline.Future[T]) *op {
	o.z = func(ctx context.Context, c *zipline.Client) reply {
		v, err := d(ctx, c)
		return zResult(v, err, conv)
	}
	if q != nil {
		o.zq = func(b *zipline.Batch) func() reply {
			f := q(b)
			return func() reply {
				v, err := f.Result()
				return zResult(v, err, conv)
			}
		}
	}
	return o
}

// zResult renders a zipline result. Do and scripts return a null reply as
// a Value with a nil error (the Value's As methods then return Nil), where
// go-redis returns redis.Nil: both are rendered (nil).
func zResult[T any](v T, err error, conv func(T) string) reply {
	if err != nil {
		return zErr(err)
	}
	if zv, ok := any(v).(zipline.Value); ok && zv.IsNil() {
		return nilReply
	}
	return val(conv(v))
}

// okOnly adapts a Client method that returns only an error (SET, MSET,
// LSET, LTRIM, RENAME) to typed's form: +OK is rendered as the string "OK",
// as go-redis's StatusCmd holds it.
func okOnly(d func(ctx context.Context, c *zipline.Client) error) func(context.Context, *zipline.Client) (bool, error) {
	return func(ctx context.Context, c *zipline.Client) (bool, error) {
		if err := d(ctx, c); err != nil {
			return false, err
		}
		return true, nil
	}
}

// goDo runs any command through go-redis's generic path.
func goDo(ctx context.Context, c goCmdable, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	_ = c.Process(ctx, cmd)
	return cmd
}

// cmdline renders a command for reports.
func cmdline(name string, args ...any) string {
	var sb strings.Builder
	sb.WriteString(name)
	for _, a := range args {
		sb.WriteByte(' ')
		switch x := a.(type) {
		case string:
			sb.WriteString(showArg([]byte(x)))
		case []byte:
			sb.WriteString(showArg(x))
		case []string:
			for i, s := range x {
				if i > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(showArg([]byte(s)))
			}
		case [][]byte:
			for i, s := range x {
				if i > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(showArg(s))
			}
		default:
			fmt.Fprint(&sb, x)
		}
	}
	return sb.String()
}

// showArg quotes an argument, shortening long ones to their start, length
// and a checksum so that reports stay readable and values stay
// identifiable.
func showArg(b []byte) string {
	if len(b) <= 48 {
		return strconv.Quote(string(b))
	}
	var sum uint32
	for _, c := range b {
		sum = sum*31 + uint32(c)
	}
	return fmt.Sprintf("%s…(%d bytes, sum %08x)", strconv.Quote(string(b[:24])), len(b), sum)
}
