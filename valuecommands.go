package zipline

import (
	"unsafe"

	"github.com/ziplinekv/zipline/internal/resp"
)

// valueCommand says where a command carries stored values, so that Do and
// Batch.Do compress and expand exactly what the typed methods do (as
// GLIDE's custom commands behave like its typed ones).
type valueCommand struct {
	family valueFamily
	// Value arguments, by index in the full argument list (the name is 0):
	// first, then every step-th after it, count of them (0: to the end).
	first, step, count int
	reply              replyShape
}

// replyShape says where a reply holds stored values.
type replyShape uint8

const (
	replyNone        replyShape = iota
	replyValue                  // a bulk string (GET)
	replyValues                 // an array of them (MGET), or one (LPOP with or without count)
	replyMapValues              // a map, or RESP2's flat array, whose values are stored (HGETALL)
	replyKeyAndValue            // [key, value] (BLPOP)
	replyKeyAndList             // [key, [values...]] (LMPOP)
)

var valueCommands = map[string]valueCommand{
	"SET":    {familyStrings, 2, 0, 1, replyValue}, // SET ... GET returns the old value
	"SETNX":  {familyStrings, 2, 0, 1, replyNone},
	"SETEX":  {familyStrings, 3, 0, 1, replyNone},
	"PSETEX": {familyStrings, 3, 0, 1, replyNone},
	"GETSET": {familyStrings, 2, 0, 1, replyValue},
	"MSET":   {familyStrings, 2, 2, 0, replyNone},
	"MSETNX": {familyStrings, 2, 2, 0, replyNone},
	"GET":    {familyStrings, 0, 0, 0, replyValue},
	"GETEX":  {familyStrings, 0, 0, 0, replyValue},
	"GETDEL": {familyStrings, 0, 0, 0, replyValue},
	"MGET":   {familyStrings, 0, 0, 0, replyValues},

	"HSET":    {familyHashes, 3, 2, 0, replyNone},
	"HMSET":   {familyHashes, 3, 2, 0, replyNone},
	"HSETNX":  {familyHashes, 3, 0, 1, replyNone},
	"HGET":    {familyHashes, 0, 0, 0, replyValue},
	"HMGET":   {familyHashes, 0, 0, 0, replyValues},
	"HVALS":   {familyHashes, 0, 0, 0, replyValues},
	"HGETALL": {familyHashes, 0, 0, 0, replyMapValues},

	"LPUSH":      {familyLists, 2, 1, 0, replyNone},
	"RPUSH":      {familyLists, 2, 1, 0, replyNone},
	"LPUSHX":     {familyLists, 2, 1, 0, replyNone},
	"RPUSHX":     {familyLists, 2, 1, 0, replyNone},
	"LSET":       {familyLists, 3, 0, 1, replyNone},
	"LINSERT":    {familyLists, 3, 1, 2, replyNone}, // pivot and element: a pivot matches elements stored with the same settings
	"LREM":       {familyLists, 3, 0, 1, replyNone},
	"LRANGE":     {familyLists, 0, 0, 0, replyValues},
	"LINDEX":     {familyLists, 0, 0, 0, replyValue},
	"LPOP":       {familyLists, 0, 0, 0, replyValues},
	"RPOP":       {familyLists, 0, 0, 0, replyValues},
	"LMOVE":      {familyLists, 0, 0, 0, replyValue},
	"BLMOVE":     {familyLists, 0, 0, 0, replyValue},
	"RPOPLPUSH":  {familyLists, 0, 0, 0, replyValue},
	"BRPOPLPUSH": {familyLists, 0, 0, 0, replyValue},
	"BLPOP":      {familyLists, 0, 0, 0, replyKeyAndValue},
	"BRPOP":      {familyLists, 0, 0, 0, replyKeyAndValue},
	"LMPOP":      {familyLists, 0, 0, 0, replyKeyAndList},
	"BLMPOP":     {familyLists, 0, 0, 0, replyKeyAndList},

	"PUBLISH":  {familyPubSub, 2, 0, 1, replyNone},
	"SPUBLISH": {familyPubSub, 2, 0, 1, replyNone},
}

// isValueArg reports whether argument i is a stored value.
func (vc valueCommand) isValueArg(i int) bool {
	if vc.first == 0 || i < vc.first {
		return false
	}
	if vc.step == 0 {
		return i == vc.first
	}
	if (i-vc.first)%vc.step != 0 {
		return false
	}
	return vc.count == 0 || (i-vc.first)/vc.step < vc.count
}

// valueCommandFor returns how Do treats a command's values on this Client:
// ok is false when nothing is compressed for it.
func (c *Client) valueCommandFor(name string) (valueCommand, bool) {
	if c.codec == nil {
		return valueCommand{}, false
	}
	vc, ok := valueCommands[name]
	return vc, ok && c.codec.covers(vc.family)
}

// appendDoArgs encodes Do's arguments, compressing the stored values.
func (c *Client) appendDoArgs(dst []byte, args []any, vc valueCommand, compress bool) ([]byte, error) {
	dst = resp.AppendArrayLen(dst, len(args))
	for i, a := range args {
		if compress && vc.isValueArg(i) {
			switch x := a.(type) {
			case []byte:
				dst = c.appendValue(dst, x, vc.family)
				continue
			case string:
				dst = c.appendValue(dst, unsafe.Slice(unsafe.StringData(x), len(x)), vc.family)
				continue
			}
		}
		var err error
		if dst, err = resp.AppendAny(dst, i, a); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// decodeReply expands the stored values in a reply, in place.
func (c *Client) decodeReply(v resp.Value, vc valueCommand) (resp.Value, error) {
	switch vc.reply {
	case replyValue:
		return c.decodeOne(v, vc.family)
	case replyValues:
		if v.Type() != resp.Array {
			return c.decodeOne(v, vc.family)
		}
		return v, c.decodeElems(v.Elems(), 0, 1, vc.family)
	case replyMapValues:
		return v, c.decodeElems(v.Elems(), 1, 2, vc.family)
	case replyKeyAndValue:
		return v, c.decodeElems(v.Elems(), 1, 2, vc.family)
	case replyKeyAndList:
		if e := v.Elems(); len(e) == 2 {
			return v, c.decodeElems(e[1].Elems(), 0, 1, vc.family)
		}
	}
	return v, nil
}

func (c *Client) decodeOne(v resp.Value, f valueFamily) (resp.Value, error) {
	if v.Type() != resp.BulkString {
		return v, nil
	}
	b, err := c.decodeValue(v.Bytes(), f)
	if err != nil {
		return resp.Value{}, err
	}
	return resp.StringValue(b), nil
}

func (c *Client) decodeElems(elems []resp.Value, from, step int, f valueFamily) error {
	for i := from; i < len(elems); i += step {
		d, err := c.decodeOne(elems[i], f)
		if err != nil {
			return err
		}
		elems[i] = d
	}
	return nil
}
