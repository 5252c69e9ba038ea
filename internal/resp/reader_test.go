package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"
)

func readOne(t *testing.T, in string) (Value, error) {
	t.Helper()
	r := NewReader(strings.NewReader(in), 0, Limits{})
	var v Value
	err := r.ReadValue(&v)
	return v, err
}

func TestReadValueTypes(t *testing.T) {
	tests := []struct {
		in   string
		want string // Value.String()
		typ  Type
	}{
		{"+OK\r\n", `"OK"`, SimpleString},
		{"+hello world\r\n", `"hello world"`, SimpleString},
		{"-ERR unknown command\r\n", "error(ERR unknown command)", SimpleError},
		{":0\r\n", "0", Integer},
		{":-9223372036854775808\r\n", "-9223372036854775808", Integer},
		{":9223372036854775807\r\n", "9223372036854775807", Integer},
		{":+5\r\n", "5", Integer},
		{"$5\r\nhello\r\n", `"hello"`, BulkString},
		{"$0\r\n\r\n", `""`, BulkString},
		{"$4\r\na\r\nb\r\n", `"a\r\nb"`, BulkString},
		{"$-1\r\n", "nil", Null},
		{"*-1\r\n", "nil", Null},
		{"_\r\n", "nil", Null},
		{"*0\r\n", "[]", Array},
		{"*3\r\n:1\r\n$1\r\na\r\n*1\r\n_\r\n", `[1 "a" [nil]]`, Array},
		{"%2\r\n+k1\r\n:1\r\n+k2\r\n#t\r\n", `["k1" 1 "k2" true]`, Map},
		{"~2\r\n:1\r\n:2\r\n", "[1 2]", Set},
		{">3\r\n+message\r\n+ch\r\n$2\r\nhi\r\n", `["message" "ch" "hi"]`, Push},
		{",3.25\r\n", "3.25", Double},
		{",inf\r\n", "+Inf", Double},
		{",-inf\r\n", "-Inf", Double},
		{",1e3\r\n", "1000", Double},
		{"#f\r\n", "false", Boolean},
		{"!11\r\nSYNTAX oops\r\n", "error(SYNTAX oops)", BlobError},
		{"=15\r\ntxt:Some string\r\n", `"Some string"`, Verbatim},
		{"(3492890328409238509324850943850943825024385\r\n", `"3492890328409238509324850943850943825024385"`, BigNumber},
		{"|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n:7\r\n", "7", Integer}, // attribute dropped
	}
	for _, tt := range tests {
		v, err := readOne(t, tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if v.Type() != tt.typ || v.String() != tt.want {
			t.Errorf("%q: got %v %s, want %v %s", tt.in, v.Type(), v, tt.typ, tt.want)
		}
	}
}

func TestReadValueNaNAndVerbatimFormat(t *testing.T) {
	v, err := readOne(t, ",nan\r\n")
	if err != nil || !math.IsNaN(v.Float()) {
		t.Fatalf("nan: %v %v", v, err)
	}
	v, err = readOne(t, "=7\r\nmkd:# x\r\n")
	if err != nil || v.VerbatimFormat() != "mkd" || string(v.Bytes()) != "# x" {
		t.Fatalf("verbatim: %v %q %v", v, v.VerbatimFormat(), err)
	}
}

func TestReadValueMalformed(t *testing.T) {
	for _, in := range []string{
		"\r\n",
		"?\r\n",
		"+OK\n",
		":12a\r\n",
		":\r\n",
		":-\r\n",
		":99999999999999999999\r\n",
		":-9223372036854775809\r\n",
		"$3\r\nabcd\r\n",
		"$-2\r\n",
		"*-2\r\n",
		"%-1\r\n",
		"$?\r\n",
		"#x\r\n",
		",abc\r\n",
		"_x\r\n",
		"=2\r\nab\r\n",
	} {
		_, err := readOne(t, in)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: got %v, want ErrProtocol", in, err)
		}
	}
}

func TestReadValueTruncated(t *testing.T) {
	full := "*2\r\n$5\r\nhello\r\n:1\r\n"
	for i := 0; i < len(full); i++ {
		_, err := readOne(t, full[:i])
		if err == nil {
			t.Fatalf("prefix %q parsed without error", full[:i])
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("prefix %q: got %v, want EOF", full[:i], err)
		}
	}
}

func TestReadValueLimits(t *testing.T) {
	lim := Limits{MaxBulkLen: 10, MaxAggregateLen: 3, MaxDepth: 2}
	// Over a limit whose size is announced: the reply is skipped, the stream
	// stays in step, and the next reply (":7") parses.
	skipped := []struct {
		in   string
		what string
		size int64
	}{
		{"$11\r\nhello world\r\n", "bulk length", 11},
		{"!11\r\nhello world\r\n", "bulk length", 11},
		{"*4\r\n:1\r\n$2\r\nab\r\n+x\r\n*1\r\n_\r\n", "aggregate length", 4},
		{"%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n", "aggregate length", 4},      // 2 pairs = 4 elements
		{"*2\r\n$11\r\nhello world\r\n$1\r\na\r\n", "bulk length", 11}, // nested
		{"*2\r\n$1\r\na\r\n$11\r\nhello world\r\n", "bulk length", 11}, // last element
		{"~5\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n:3\r\n_\r\n$-1\r\n", "aggregate length", 5},
	}
	for _, c := range skipped {
		r := NewReader(strings.NewReader(c.in+":7\r\n"), 16, lim)
		var v Value
		if err := r.ReadValue(&v); err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		le := v.Oversize(lim)
		if le == nil || le.What != c.what || le.Size != c.size {
			t.Errorf("%q: got %s %+v, want %s of %d", c.in, v.Type(), le, c.what, c.size)
			continue
		}
		if err := r.ReadValue(&v); err != nil || v.Int() != 7 {
			t.Errorf("%q: stream out of step after the skip: %v %v", c.in, v, err)
		}
	}
	// Over a limit with no safe way to skip: a fatal LimitError.
	fatal := map[string]string{
		"*1\r\n*1\r\n*1\r\n:1\r\n":        "nesting depth",
		"%9223372036854775807\r\n":        "aggregate length",
		"$9223372036854775807\r\nabc\r\n": "bulk length",
	}
	for in, what := range fatal {
		r := NewReader(strings.NewReader(in), 0, lim)
		var v Value
		err := r.ReadValue(&v)
		var le *LimitError
		if !errors.As(err, &le) || le.What != what {
			t.Errorf("%q: got %v, want LimitError %q", in, err, what)
		}
	}
	// A line longer than maxLineLen without a newline must stop, not grow forever.
	r := NewReader(io.MultiReader(strings.NewReader("+"), strings.NewReader(strings.Repeat("x", maxLineLen+10))), 0, Limits{})
	var v Value
	var le *LimitError
	if err := r.ReadValue(&v); !errors.As(err, &le) || le.What != "line length" {
		t.Fatalf("long line: %v", err)
	}
}

// Skipping an oversize reply allocates nothing proportional to it.
func TestReadValueSkipDoesNotAllocate(t *testing.T) {
	payload := strings.Repeat("x", 8<<20)
	in := "$" + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n:1\r\n"
	before := totalAlloc()
	r := NewReader(strings.NewReader(in), 0, Limits{MaxBulkLen: 1 << 20})
	var v Value
	if err := r.ReadValue(&v); err != nil || v.Type() != Oversize {
		t.Fatalf("got %v %v", v.Type(), err)
	}
	if grew := totalAlloc() - before; grew > 1<<20 {
		t.Fatalf("skipping an 8 MiB reply allocated %d bytes", grew)
	}
}

// Desynchronised streams look like simple strings with a CR inside them;
// they must not parse.
func TestReadValueRejectsCRInsideSimpleLines(t *testing.T) {
	for _, in := range []string{"+O\rK\r\n", "-ERR \rx\r\n", "+\r\r\n", "(12a\r\n"} {
		if _, err := readOne(t, in); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: got %v, want ErrProtocol", in, err)
		}
	}
}

// Parse errors describe what was wrong without repeating the stream's
// bytes, which may be someone's stored value.
func TestReadValueErrorsCarryNoContent(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, in := range []string{":" + secret + "\r\n", "," + secret + "\r\n", "#" + secret + "\r\n",
		"_" + secret + "\r\n", "(" + secret + "\r\n", "$" + secret + "\r\n"} {
		_, err := readOne(t, in)
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: error %v carries the content", in, err)
		}
	}
}

// A peer that announces a huge bulk string and then stalls must not make the
// reader allocate the announced size.
func TestReadValueLyingLengthDoesNotPreallocate(t *testing.T) {
	in := "$400000000\r\nabc"
	before := totalAlloc()
	r := NewReader(strings.NewReader(in), 0, Limits{})
	var v Value
	if err := r.ReadValue(&v); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", err)
	}
	if grew := totalAlloc() - before; grew > 4<<20 {
		t.Fatalf("reader allocated %d bytes for a 3-byte payload", grew)
	}
	big := "*2147483647\r\n:1\r\n"
	r = NewReader(strings.NewReader(big), 0, Limits{MaxAggregateLen: math.MaxInt64})
	if err := r.ReadValue(&v); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("aggregate: %v", err)
	}
}

func TestReadValueLargeBulkAcrossReads(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB, bigger than exactAllocMax
	var in bytes.Buffer
	in.Write(AppendBulk(nil, payload))
	in.WriteString(":42\r\n")
	r := NewReader(iotest.HalfReader(&in), 512, Limits{})
	var v Value
	if err := r.ReadValue(&v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.Bytes(), payload) {
		t.Fatalf("payload mismatch: len %d", len(v.Bytes()))
	}
	if err := r.ReadValue(&v); err != nil || v.Int() != 42 {
		t.Fatalf("next reply: %v %v", v, err)
	}
}

// readSizes records how many bytes each Read asked for.
type readSizes struct {
	r     io.Reader
	sizes []int
}

func (rs *readSizes) Read(p []byte) (int, error) {
	rs.sizes = append(rs.sizes, len(p))
	return rs.r.Read(p)
}

// A small bulk string that the end of the buffer cuts in two is read on
// through the buffer: the Read that brings its remainder asks for as much
// as the buffer holds, so it also brings the replies after it. Reading the
// remainder alone cost GET 2 KiB under load a system call per buffer.
func TestSmallBulkCutByBufferReadsOn(t *testing.T) {
	payload := bytes.Repeat([]byte("v"), 2048)
	var in bytes.Buffer
	for range 40 {
		in.Write(AppendBulk(nil, payload))
	}
	src := &readSizes{r: &in}
	r := NewReader(src, 0, Limits{})
	var v Value
	for i := range 40 {
		if err := r.ReadValue(&v); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if !bytes.Equal(v.Bytes(), payload) {
			t.Fatalf("reply %d: %d bytes, not the payload", i, len(v.Bytes()))
		}
	}
	// The buffer starts small and grows with the burst: a few reads, then
	// every read asks for at least half of DefaultBufferSize.
	grown := slices.IndexFunc(src.sizes, func(n int) bool { return n >= DefaultBufferSize/2 })
	if grown < 0 || grown > 10 {
		t.Fatalf("the buffer did not grow to its full size within 10 reads: %v", src.sizes)
	}
	for i, n := range src.sizes[grown:] {
		if n < DefaultBufferSize/2 {
			t.Fatalf("read %d of %d asked for %d bytes, want at least half the buffer (%d): %v",
				grown+i+1, len(src.sizes), n, DefaultBufferSize/2, src.sizes)
		}
	}
}

// The buffer grows while reads fill it, up to the size asked for, and
// Shrink gives the room back once the replies are read.
func TestBufferGrowsWithUseAndShrinks(t *testing.T) {
	var in bytes.Buffer
	for range 200 {
		in.Write(AppendBulk(nil, bytes.Repeat([]byte("v"), 100)))
	}
	r := NewReader(&in, 4096, Limits{})
	if len(r.buf) != firstBufferSize {
		t.Fatalf("first buffer %d bytes, want %d", len(r.buf), firstBufferSize)
	}
	var v Value
	for i := range 200 {
		if err := r.ReadValue(&v); err != nil || len(v.Bytes()) != 100 {
			t.Fatalf("reply %d: %d bytes, %v", i, len(v.Bytes()), err)
		}
		if i == 100 && r.Shrink() {
			t.Fatal("Shrink with replies buffered")
		}
	}
	if len(r.buf) != 4096 {
		t.Fatalf("buffer %d bytes after a burst, want 4096 (the size asked for)", len(r.buf))
	}
	if !r.Shrink() || r.buf != nil {
		t.Fatalf("after Shrink the buffer holds %d bytes, want none", len(r.buf))
	}
	in.Write(AppendBulk(nil, []byte("after")))
	if err := r.ReadValue(&v); err != nil || string(v.Bytes()) != "after" {
		t.Fatalf("after Shrink: %q, %v", v.Bytes(), err)
	}
	if len(r.buf) != firstBufferSize {
		t.Fatalf("the read after Shrink made a buffer of %d bytes, want %d", len(r.buf), firstBufferSize)
	}
}

func TestReadValueOneByteAtATime(t *testing.T) {
	in := "*3\r\n$3\r\nfoo\r\n%1\r\n+a\r\n,1.5\r\n=8\r\ntxt:abcd\r\n+OK\r\n"
	r := NewReader(iotest.OneByteReader(strings.NewReader(in)), 4, Limits{})
	var v Value
	if err := r.ReadValue(&v); err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != `["foo" ["a" 1.5] "abcd"]` {
		t.Fatalf("got %s", got)
	}
	if err := r.ReadValue(&v); err != nil || string(v.Bytes()) != "OK" {
		t.Fatalf("second reply %v %v", v, err)
	}
}

func TestBulkBytesAreOwned(t *testing.T) {
	r := NewReader(strings.NewReader("$3\r\nabc\r\n$3\r\nxyz\r\n"), 0, Limits{})
	var a, b Value
	if err := r.ReadValue(&a); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadValue(&b); err != nil {
		t.Fatal(err)
	}
	if string(a.Bytes()) != "abc" || string(b.Bytes()) != "xyz" {
		t.Fatalf("first reply was overwritten: %q %q", a.Bytes(), b.Bytes())
	}
}

func TestReadValueAllocations(t *testing.T) {
	stream := strings.Repeat("+OK\r\n:12\r\n$5\r\nhello\r\n", 1000)
	r := NewReader(strings.NewReader(stream), 0, Limits{})
	var v Value
	okAndInt := testing.AllocsPerRun(500, func() {
		_ = r.ReadValue(&v)
		_ = r.ReadValue(&v)
		_ = r.ReadValue(&v) // the bulk string: its bytes are the one allocation
	})
	if okAndInt > 1 {
		t.Fatalf("+OK, :12 and one bulk cost %v allocations, want 1", okAndInt)
	}
}

// An aggregate of bulk strings held whole in the buffer (a pub/sub
// message, an MGET reply) costs two allocations however many strings it
// holds: its elements, and one slab for their bytes.
func TestAggregateOfBulksAllocatesOnce(t *testing.T) {
	push := ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n"
	mget := "*4\r\n$1\r\na\r\n$-1\r\n$0\r\n\r\n$3\r\nbcd\r\n"
	r := NewReader(strings.NewReader(strings.Repeat(push+mget, 1000)), 64<<10, Limits{})
	var v Value
	allocs := testing.AllocsPerRun(500, func() {
		_ = r.ReadValue(&v)
		_ = r.ReadValue(&v)
	})
	if allocs > 4 {
		t.Fatalf("a 3-string push and a 4-element MGET reply cost %v allocations, want 4", allocs)
	}
	if got := v.String(); got != `["a" nil "" "bcd"]` {
		t.Fatalf("MGET reply parsed as %s", got)
	}
}

// ShareNext: the next replies, as far as they are bulk strings already
// buffered, share one allocation; each is still its own (appending to one
// never writes over the next), and what follows the run, or was not yet
// buffered, is read as before.
func TestShareNext(t *testing.T) {
	in := "$3\r\nabc\r\n$-1\r\n$0\r\n\r\n$3\r\ndef\r\n:5\r\n$2\r\ngh\r\n$2\r\nij\r\n"
	r := NewReader(strings.NewReader(in), 0, Limits{})
	var first Value
	if err := r.ReadValue(&first); err != nil { // fills the buffer
		t.Fatal(err)
	}
	r.ShareNext(5) // null, "", def, :5 (ends the run), gh
	vals := make([]Value, 6)
	for i := range vals {
		if err := r.ReadValue(&vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	got := first.String()
	for _, v := range vals {
		got += " " + v.String()
	}
	if want := `"abc" nil "" "def" 5 "gh" "ij"`; got != want {
		t.Fatalf("read %s, want %s", got, want)
	}
	// Only def is in the run after the first value: a run of one string
	// shares nothing.
	if r.slab != nil {
		t.Fatal("a slab outlives its run")
	}

	r = NewReader(strings.NewReader(in), 0, Limits{})
	r.fill()
	r.ShareNext(4)
	var a, null, empty, d Value
	for _, v := range []*Value{&a, &null, &empty, &d} {
		if err := r.ReadValue(v); err != nil {
			t.Fatal(err)
		}
	}
	ab, db := a.Bytes(), d.Bytes()
	if unsafe.Add(unsafe.Pointer(&ab[0]), 3) != unsafe.Pointer(&db[0]) {
		t.Fatal("abc and def were not carved from one allocation")
	}
	if ab = append(ab, "XYZ"...); string(ab) != "abcXYZ" || string(db) != "def" || empty.Bytes() == nil || !null.IsNull() {
		t.Fatalf("appending to the first string changed the next: %q %q", ab, db)
	}
	if r.slab != nil {
		t.Fatal("a slab outlives its run")
	}

	// Strings not yet wholly buffered are left out of the run.
	r = NewReader(iotest.HalfReader(strings.NewReader("$3\r\nabc\r\n$3\r\ndef\r\n$10\r\n0123456789\r\n")), 24, Limits{})
	r.fill()
	r.ShareNext(3)
	for _, want := range []string{"abc", "def", "0123456789"} {
		var v Value
		if err := r.ReadValue(&v); err != nil || string(v.Bytes()) != want {
			t.Fatalf("read %q, %v; want %q", v.Bytes(), err, want)
		}
	}
}

// A pipelined batch of bulk replies, buffered whole, costs one allocation
// however many replies it holds.
func TestShareNextAllocatesOnce(t *testing.T) {
	reply := "$5\r\nhello\r\n"
	r := NewReader(strings.NewReader(strings.Repeat(reply, 10_000)), 64<<10, Limits{})
	var v Value
	allocs := testing.AllocsPerRun(500, func() {
		r.ShareNext(10)
		for range 10 {
			_ = r.ReadValue(&v)
		}
	})
	if allocs > 1 {
		t.Fatalf("ten bulk replies cost %v allocations, want 1", allocs)
	}
	if string(v.Bytes()) != "hello" {
		t.Fatalf("read %q", v.Bytes())
	}
}

// Strings that share a slab are still each the caller's own: appending
// to one never writes over the next.
func TestAggregateStringsDoNotAlias(t *testing.T) {
	v, err := readOne(t, "*3\r\n$3\r\nabc\r\n$3\r\ndef\r\n$3\r\nghi\r\n")
	if err != nil {
		t.Fatal(err)
	}
	e := v.Elems()
	a := append(e[0].Bytes(), "XYZ"...)
	if string(a) != "abcXYZ" || string(e[1].Bytes()) != "def" || string(e[2].Bytes()) != "ghi" {
		t.Fatalf("appending to the first string changed the others: %q %q %q", a, e[1].Bytes(), e[2].Bytes())
	}
}

// Aggregates the slab does not cover (nested, mixed, or not yet wholly
// read) parse as before.
func TestAggregateSlabFallbacks(t *testing.T) {
	for _, in := range []string{
		"*2\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
		"*3\r\n$1\r\na\r\n:7\r\n$1\r\nb\r\n",
		"*2\r\n$3\r\nabc\r\n$10\r\n0123456789\r\n",
	} {
		want, err := readOne(t, in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		// One byte per read: no aggregate is ever whole in the buffer.
		r := NewReader(iotest.OneByteReader(strings.NewReader(in)), 0, Limits{})
		var got Value
		if err := r.ReadValue(&got); err != nil {
			t.Fatalf("%q byte by byte: %v", in, err)
		}
		if got.String() != want.String() {
			t.Fatalf("%q: %s byte by byte, %s whole", in, got, want)
		}
	}
}

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

func TestReplyBufferedTellsRepliesFromPushes(t *testing.T) {
	for in, want := range map[string][]bool{
		"+OK\r\n+EXTRA\r\n":                   {true, false},
		"+OK\r\n>2\r\n+a\r\n+b\r\n":           {false, false},
		"+OK\r\n|1\r\n+k\r\n+v\r\n+after\r\n": {false, false},
		"+OK\r\n":                             {false},
		"$3\r\nabc\r\n:1\r\n":                 {true, false},
	} {
		r := NewReader(strings.NewReader(in), 0, Limits{})
		for i, w := range want {
			var v Value
			if err := r.ReadValue(&v); err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			if got := r.ReplyBuffered(); got != w {
				t.Errorf("%q after value %d: ReplyBuffered %v, want %v", in, i+1, got, w)
			}
		}
	}
}

// An empty bulk string and a null stay apart in every way a reply is read:
// alone, inside an aggregate whose strings share a slab (including an
// aggregate of empty strings only, whose slab is nil), and byte by byte.
// nil is what callers read as "missing" (MGET), so an empty string read as
// nil is wrong data.
func TestEmptyBulkStringIsNotNull(t *testing.T) {
	for _, in := range []string{
		"$0\r\n\r\n",
		"*1\r\n$0\r\n\r\n",
		"*2\r\n$0\r\n\r\n$0\r\n\r\n",
		"*3\r\n$1\r\nv\r\n$0\r\n\r\n$-1\r\n",
		"*3\r\n$0\r\n\r\n$-1\r\n$1\r\nv\r\n",
		"%1\r\n$1\r\nf\r\n$0\r\n\r\n",
		"*2\r\n*1\r\n$0\r\n\r\n$0\r\n\r\n",
	} {
		for _, whole := range []bool{true, false} {
			var src io.Reader = strings.NewReader(in)
			if !whole {
				src = iotest.OneByteReader(src)
			}
			r := NewReader(src, 0, Limits{})
			var v Value
			if err := r.ReadValue(&v); err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			var walk func(v Value)
			walk = func(v Value) {
				switch v.Type() {
				case BulkString:
					if v.Bytes() == nil {
						t.Errorf("%q (whole %v): an empty bulk string read as nil bytes", in, whole)
					}
				case Null:
					if v.Bytes() != nil {
						t.Errorf("%q (whole %v): a null has bytes", in, whole)
					}
				}
				for _, e := range v.Elems() {
					walk(e)
				}
			}
			walk(v)
		}
	}
}
