package cmdspec

import (
	"strconv"
	"strings"
)

// Args is a command's arguments after its name, as the key finder reads
// them: N of them, At returning argument i as text (a subcommand's name is
// argument 0). A pair of a count and a function, not an interface, so
// that a caller's argument array stays on its stack: a value converted to
// an interface whose methods are called is taken to escape.
type Args struct {
	N  int
	At func(i int) string
}

// Strings returns Args over a string slice.
func Strings(s []string) Args { return Args{len(s), func(i int) string { return s[i] }} }

// AppendKeys appends to dst the positions in args (0 is the first argument
// after the name) of the command's keys, found as the server finds them:
// from its key specs, or, for the two commands whose specs are incomplete
// (SORT's STORE, MIGRATE's KEYS), as the server's own procedures do. A key
// spec that does not fit args (a numkeys that is not a number, a missing
// keyword, too few arguments) contributes no keys: the server refuses such
// a command itself, wherever it is sent. Keys that nothing can find (SORT's
// BY and GET patterns) are not returned. Arguments that are not keys but
// hash to a slot like them (the channel of SPUBLISH) are.
func (c *Command) AppendKeys(dst []int, args Args) []int {
	switch c.Name {
	case "sort":
		return sortKeys(dst, args)
	case "migrate":
		return migrateKeys(dst, args)
	}
	// Positions below are the server's, in argv: the name is 0.
	argc := args.N + 1
	for i := range c.KeySpecs {
		ks := &c.KeySpecs[i]
		first := 0
		switch ks.Begin.Kind {
		case BeginIndex:
			first = ks.Begin.Index
		case BeginKeyword:
			first = keywordSearch(&ks.Begin, args, argc)
		}
		if first <= 0 || first >= argc {
			continue
		}
		var last, step int
		switch ks.Find.Kind {
		case FindRange:
			step = ks.Find.KeyStep
			switch {
			case ks.Find.LastKey >= 0:
				last = first + ks.Find.LastKey
			case ks.Find.Limit == 0:
				last = argc + ks.Find.LastKey
			default: // LastKey -1 with a limit: 1/Limit of what remains
				last = first + (argc-first)/ks.Find.Limit + ks.Find.LastKey
			}
		case FindKeynum:
			step = ks.Find.KeyStep
			at := first + ks.Find.KeyNumIdx
			if at >= argc {
				continue
			}
			n, err := strconv.ParseInt(args.At(at-1), 10, 64)
			if err != nil || n < 0 || n > int64(argc) {
				continue
			}
			first += ks.Find.FirstKey
			last = first + int(n) - 1
		default:
			continue
		}
		if last >= argc || last < first {
			continue // too few arguments (or none to find): the server's error
		}
		for p := first; p <= last; p += step {
			dst = append(dst, p-1)
		}
	}
	return dst
}

// keywordSearch returns the position after the key spec's keyword, or 0
// if it is not there. As the server, it never takes the last argument for
// the keyword (a key must follow it), nor the name.
func keywordSearch(b *BeginSearch, args Args, argc int) int {
	if b.StartFrom > 0 {
		for i := b.StartFrom; i < argc-1; i++ {
			if strings.EqualFold(args.At(i-1), b.Keyword) {
				return i + 1
			}
		}
		return 0
	}
	for i := argc + b.StartFrom; i > 0; i-- {
		if i < argc && strings.EqualFold(args.At(i-1), b.Keyword) {
			return i + 1
		}
	}
	return 0
}

// sortKeys finds SORT's keys as the server's sortGetKeys does: the key, and
// the destination of its last STORE option, stepping over LIMIT's two
// arguments and the patterns of GET and BY.
func sortKeys(dst []int, args Args) []int {
	if args.N == 0 {
		return dst
	}
	dst = append(dst, 0)
	store := -1
	for i := 1; i < args.N; i++ {
		switch w := args.At(i); {
		case strings.EqualFold(w, "LIMIT"):
			i += 2
		case strings.EqualFold(w, "GET"), strings.EqualFold(w, "BY"):
			i++
		case strings.EqualFold(w, "STORE") && i+1 < args.N:
			store = i + 1
		}
	}
	if store >= 0 {
		dst = append(dst, store)
	}
	return dst
}

// migrateKeys finds MIGRATE's keys as the server's migrateGetKeys does:
// the key argument, or, with the KEYS option (which wants the key argument
// empty), every argument after KEYS.
func migrateKeys(dst []int, args Args) []int {
	if args.N < 5 {
		return dst
	}
	for i := 5; i < args.N; i++ {
		switch w := args.At(i); {
		case strings.EqualFold(w, "KEYS"):
			if args.At(2) != "" {
				return dst // the server refuses it
			}
			for k := i + 1; k < args.N; k++ {
				dst = append(dst, k)
			}
			return dst
		case strings.EqualFold(w, "AUTH"):
			i++
		case strings.EqualFold(w, "AUTH2"):
			i += 2
		}
	}
	return append(dst, 2)
}
