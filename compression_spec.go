package zipline

// Where commands carry stored values, as data: the family a value belongs
// to, which arguments are values, where replies hold them. The overlay
// (spec_overlay.go) fills a valueSpec per command; compression_plan.go reads it.

// valueFamily is the command family a stored value belongs to, which
// decides whether compression applies to it.
type valueFamily uint8

const (
	familyNone valueFamily = iota // the command carries no stored values
	familyStrings
	familyHashes
	familyLists
	familyPubSub
)

// valueSpec says where one command carries stored values: which
// arguments compression applies to, and where a reply holds values to
// expand (a command's overlay, spec_overlay.go). Typed methods, Batch, Tx
// and Do all encode through it (request.add), so a command compresses the
// same whichever way it is sent, as GLIDE's custom commands behave like its
// typed ones. A command with none stores and reads its arguments as they
// are. Everything is data, read by lookupValues: nothing here escapes the
// arguments it is given, so encoding stays allocation-free.
type valueSpec struct {
	family valueFamily
	// values are the arguments that are stored values.
	values argSpan
	// valuesAfter is the option after which, and its count, the values
	// are every other argument: HSETEX ... FIELDS n f v f v.
	valuesAfter *option
	// reply says where the reply holds stored values.
	reply replyShape
	// replyWith and replyWithout are the options that the reply's values
	// depend on: HRANDFIELD returns values only WITHVALUES, HSCAN unless
	// NOVALUES.
	replyWith, replyWithout *option
	// valuesNumKeys: the first argument is a count of key, value pairs
	// that follow, and the values are theirs (MSETEX numkeys k v k v EX 1).
	valuesNumKeys bool
	// refuse: the command works on stored bytes, so it is refused while its
	// family is compressed; refuseWith, only with this option (SET ...
	// IFEQ compares the stored bytes).
	refuse     bool
	refuseWith *option
	// sortsStored: the command (SORT) compares stored values, so it is
	// refused when they may be compressed (see sortRefusal).
	sortsStored bool
	// read: the command reads stored bytes, so on a key in the compressed
	// scope it is answered from the expanded value (plainreads.go).
	read plainReadKind
	// script: the command runs a script or function given keys, which is
	// refused while a key is in the compressed scope.
	script bool
	// moves: the command moves or copies a stored value from its first key
	// to its second (RENAME, COPY, LMOVE), which is refused from a key in
	// the compressed scope to one a rule keeps plain: the plain key would
	// then hold a compressed value that readers of it cannot expect.
	moves bool
}

// argSpan selects arguments by index (the command name excluded): first,
// then every step-th after it, count of them (0: to the end); step 0
// selects first alone. The zero argSpan selects nothing.
type argSpan struct{ first, step, count int }

func (s argSpan) has(i int) bool {
	if s.count == 0 && s.step == 0 || i < s.first {
		return false
	}
	if s.step == 0 {
		return i == s.first
	}
	if (i-s.first)%s.step != 0 {
		return false
	}
	return s.count == 0 || (i-s.first)/s.step < s.count
}

// at selects argument i; every, from first on every step-th; span, count
// of them.
func at(i int) argSpan { return argSpan{i, 0, 1} }

func every(first, step int) argSpan { return argSpan{first, step, 0} }

func span(first, step, count int) argSpan { return argSpan{first, step, count} }

func refused(f valueFamily) valueSpec { return valueSpec{family: f, refuse: true} }

func readPlain(f valueFamily, k plainReadKind) valueSpec { return valueSpec{family: f, read: k} }

func moving(f valueFamily) valueSpec { return valueSpec{family: f, moves: true} }

var (
	hscanNoValues        = &option{word: "NOVALUES", from: 2, takes: []optionArgs{{"MATCH", 1}, {"COUNT", 1}}}
	hrandfieldWithValues = &option{word: "WITHVALUES", from: 2}
	hsetexFields         = &option{word: "FIELDS", from: 1, takes: []optionArgs{{"EX", 1}, {"PX", 1}, {"EXAT", 1}, {"PXAT", 1}}}
	xreadBlock           = &option{word: "BLOCK", from: 0, takes: []optionArgs{{"COUNT", 1}}, until: "STREAMS"}
	xreadgroupBlock      = &option{word: "BLOCK", from: 3, takes: []optionArgs{{"COUNT", 1}}, until: "STREAMS"}
	sortOptions          = []optionArgs{{"BY", 1}, {"LIMIT", 2}, {"GET", 1}, {"STORE", 1}}
	sortBy               = &option{word: "BY", from: 1, takes: sortOptions}
	sortStore            = &option{word: "STORE", from: 1, takes: sortOptions}
	setIfEq              = &option{word: "IFEQ", from: 2, takes: []optionArgs{{"EX", 1}, {"PX", 1}, {"EXAT", 1}, {"PXAT", 1}}}
)

// replyShape says where a reply holds stored values.
type replyShape uint8

const (
	replyNone        replyShape = iota
	replyValue                  // a bulk string (GET)
	replyValues                 // an array of them (MGET), or one (LPOP with or without count)
	replyPairs                  // field, value pairs: a map, RESP2's flat array, or RESP3's [[f, v]...] (HGETALL, HRANDFIELD)
	replyKeyAndValue            // [key, value] (BLPOP)
	replyKeyAndList             // [key, [values...]] (LMPOP)
	replyScanPairs              // [cursor, [field, value, ...]] (HSCAN)
	replyDeep                   // any bulk string at any depth (EVAL, SORT ... GET)
	replyRead                   // computed from a read of the plaintext (valueReply.read)
)
