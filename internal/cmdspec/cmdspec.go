// Package cmdspec describes Redis and Valkey commands as the servers
// describe them (COMMAND INFO): arity, flags, key specs and subcommands,
// and finds a command's keys in its arguments the way the server does.
// It knows no connection: it reads a parsed reply and argument lists, and
// is tested against the servers' own answers (COMMAND GETKEYS).
package cmdspec

import (
	"fmt"
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Flags are a command's flags, as COMMAND INFO lists them.
type Flags uint32

// The flags routing and connection handling read. Others are ignored.
const (
	Write Flags = 1 << iota
	ReadOnly
	Admin
	PubSub
	NoScript
	Blocking
	MovableKeys
	NoMandatoryKeys
	Loading
	Stale
	Fast
)

var flagNames = map[string]Flags{
	"write": Write, "readonly": ReadOnly, "admin": Admin, "pubsub": PubSub, "noscript": NoScript,
	"blocking": Blocking, "movablekeys": MovableKeys, "no_mandatory_keys": NoMandatoryKeys,
	"loading": Loading, "stale": Stale, "fast": Fast,
}

// Command is one command, or one subcommand of a container command
// (CONFIG GET, OBJECT ENCODING).
type Command struct {
	// Name is the server's name, in lower case; a subcommand's is
	// "container|sub" ("object|encoding").
	Name string
	// Arity counts the name: N means exactly N arguments with it, -N at
	// least N.
	Arity int
	Flags Flags
	// FlagNames are all the flags the server lists, Flags' and others.
	FlagNames []string
	// KeySpecs say where the keys are (Redis 7+, Valkey 7+).
	KeySpecs []KeySpec
	// Subcommands, by upper-case subcommand name, for a container.
	Subcommands map[string]*Command
	// Request and Response are the servers' routing tips for a cluster
	// (see RequestPolicy).
	Request  RequestPolicy
	Response ResponsePolicy
}

// Has reports whether every flag in f is set.
func (c *Command) Has(f Flags) bool { return c.Flags&f == f }

// KeySpec is one key spec: where its keys begin, and how many follow.
type KeySpec struct {
	Begin BeginSearch `json:"begin"`
	Find  FindKeys    `json:"find"`
	// Incomplete: the keys found may not be all the command's keys (SORT's
	// BY and GET patterns, MIGRATE's KEYS).
	Incomplete bool `json:"incomplete,omitempty"`
	// NotKey: the arguments are not keys but hash to a slot as keys do: a
	// sharded channel (SPUBLISH, SSUBSCRIBE).
	NotKey bool `json:"not_key,omitempty"`
}

// BeginSearch is where a key spec's first key is found.
type BeginSearch struct {
	Kind BeginKind `json:"kind"`
	// Index (BeginIndex) is the first key's position, the command name at
	// 0 and a subcommand's name at 1.
	Index int `json:"index,omitempty"`
	// Keyword and StartFrom (BeginKeyword): the first key follows the
	// first argument equal to Keyword, searched from StartFrom onwards, or,
	// if StartFrom is negative, backwards from argc+StartFrom.
	Keyword   string `json:"keyword,omitempty"`
	StartFrom int    `json:"startfrom,omitempty"`
}

// BeginKind is how a key spec's first key is found.
type BeginKind uint8

// Begin search kinds.
const (
	BeginUnknown BeginKind = iota // cannot be found from the arguments (SORT's BY patterns)
	BeginIndex
	BeginKeyword
)

// FindKeys is how many keys follow a key spec's first.
type FindKeys struct {
	Kind FindKind `json:"kind"`
	// KeyStep is the distance between keys (2 for key, value pairs).
	KeyStep int `json:"keystep,omitempty"`
	// Range: LastKey is the last key's offset from the first, or, when
	// negative, from the end (-1: the last argument); a Limit above 0
	// with LastKey -1 takes 1/Limit of what remains (XREAD STREAMS).
	LastKey int `json:"lastkey,omitempty"`
	Limit   int `json:"limit,omitempty"`
	// Keynum: the number of keys is the argument KeyNumIdx after the
	// first's position, and the keys start FirstKey after it.
	KeyNumIdx int `json:"keynumidx,omitempty"`
	FirstKey  int `json:"firstkey,omitempty"`
}

// FindKind is how a key spec's keys are counted.
type FindKind uint8

// Find keys kinds.
const (
	FindUnknown FindKind = iota
	FindRange
	FindKeynum
)

// Table is a server's commands, by upper-case name.
type Table map[string]*Command

// Lookup returns the command that name and args (without the name) stand
// for: a container's subcommand when args begins with one, or nil if the
// table does not have the command. name must be upper case.
func (t Table) Lookup(name string, args Args) *Command {
	c := t[name]
	if c == nil || len(c.Subcommands) == 0 || args.N == 0 {
		return c
	}
	if sub := c.Subcommands[strings.ToUpper(args.At(0))]; sub != nil {
		return sub
	}
	return c
}

// Parse reads a COMMAND or COMMAND INFO reply (RESP2 or RESP3) into a
// Table. Entries it cannot read are an error: a server that answered
// COMMAND describes every command it has.
func Parse(v resp.Value) (Table, error) {
	t := Table{}
	for i, e := range v.Elems() {
		if e.IsNull() { // COMMAND INFO of an unknown name
			continue
		}
		c, err := parseCommand(e)
		if err != nil {
			return nil, fmt.Errorf("cmdspec: COMMAND entry %d: %w", i, err)
		}
		t[strings.ToUpper(c.Name)] = c
	}
	return t, nil
}

func parseCommand(v resp.Value) (*Command, error) {
	f := v.Elems()
	if len(f) < 6 {
		return nil, fmt.Errorf("%d fields, want at least 6", len(f))
	}
	c := &Command{Name: strings.ToLower(string(f[0].Bytes())), Arity: int(f[1].Int())}
	if c.Name == "" {
		return nil, fmt.Errorf("no name")
	}
	for _, fl := range f[2].Elems() {
		name := strings.ToLower(string(fl.Bytes()))
		c.Flags |= flagNames[name]
		c.FlagNames = append(c.FlagNames, name)
	}
	if len(f) > 7 {
		var tips []string
		for _, t := range f[7].Elems() {
			tips = append(tips, string(t.Bytes()))
		}
		c.readTips(tips)
	}
	if len(f) > 8 {
		for _, ks := range f[8].Elems() {
			spec, err := parseKeySpec(ks)
			if err != nil {
				return nil, fmt.Errorf("%s: key spec: %w", c.Name, err)
			}
			c.KeySpecs = append(c.KeySpecs, spec)
		}
	} else if first := int(f[3].Int()); first > 0 {
		// A server before Redis 7 lists first key, last key and step only.
		last, step := int(f[4].Int()), int(f[5].Int())
		spec := KeySpec{Begin: BeginSearch{Kind: BeginIndex, Index: first}, Find: FindKeys{Kind: FindRange, KeyStep: max(step, 1)}}
		if last < 0 {
			spec.Find.LastKey = last
		} else {
			spec.Find.LastKey = last - first
		}
		c.KeySpecs = append(c.KeySpecs, spec)
	}
	if len(f) > 9 {
		for _, sv := range f[9].Elems() {
			sub, err := parseCommand(sv)
			if err != nil {
				return nil, fmt.Errorf("%s: subcommand: %w", c.Name, err)
			}
			if c.Subcommands == nil {
				c.Subcommands = map[string]*Command{}
			}
			_, name, _ := strings.Cut(sub.Name, "|")
			c.Subcommands[strings.ToUpper(name)] = sub
		}
	}
	return c, nil
}

// fields reads a map (RESP3) or a flat array of pairs (RESP2) by key.
func fields(v resp.Value) map[string]resp.Value {
	e := v.Elems()
	m := make(map[string]resp.Value, len(e)/2)
	for i := 0; i+1 < len(e); i += 2 {
		m[string(e[i].Bytes())] = e[i+1]
	}
	return m
}

func parseKeySpec(v resp.Value) (KeySpec, error) {
	m := fields(v)
	var ks KeySpec
	for _, fl := range m["flags"].Elems() {
		switch strings.ToLower(string(fl.Bytes())) {
		case "incomplete":
			ks.Incomplete = true
		case "not_key":
			ks.NotKey = true
		}
	}
	bs := fields(m["begin_search"])
	bspec := fields(bs["spec"])
	switch string(bs["type"].Bytes()) {
	case "index":
		ks.Begin = BeginSearch{Kind: BeginIndex, Index: int(bspec["index"].Int())}
	case "keyword":
		ks.Begin = BeginSearch{Kind: BeginKeyword, Keyword: string(bspec["keyword"].Bytes()),
			StartFrom: int(bspec["startfrom"].Int())}
	case "unknown":
	default:
		return ks, fmt.Errorf("begin_search type %q", bs["type"].Bytes())
	}
	fk := fields(m["find_keys"])
	fspec := fields(fk["spec"])
	switch string(fk["type"].Bytes()) {
	case "range":
		ks.Find = FindKeys{Kind: FindRange, LastKey: int(fspec["lastkey"].Int()), KeyStep: int(fspec["keystep"].Int()),
			Limit: int(fspec["limit"].Int())}
	case "keynum":
		ks.Find = FindKeys{Kind: FindKeynum, KeyNumIdx: int(fspec["keynumidx"].Int()),
			FirstKey: int(fspec["firstkey"].Int()), KeyStep: int(fspec["keystep"].Int())}
	case "unknown":
	default:
		return ks, fmt.Errorf("find_keys type %q", fk["type"].Bytes())
	}
	if ks.Find.Kind != FindUnknown && ks.Find.KeyStep < 1 {
		return ks, fmt.Errorf("key step %d", ks.Find.KeyStep)
	}
	return ks, nil
}
