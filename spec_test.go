package zipline

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// Every overlay entry names a command or subcommand the servers have: a
// misspelled name would silently add nothing.
func TestOverlayNamesCommands(t *testing.T) {
	for name := range overlay {
		cmdName, sub, _ := strings.Cut(name, " ")
		spec := commandSpecs[cmdName]
		if spec == nil {
			t.Errorf("overlay %q: no such command", name)
			continue
		}
		if sub != "" && spec.subs[sub] == nil {
			t.Errorf("overlay %q: %s has no subcommand %s", name, cmdName, sub)
		}
	}
}

// The generated files are what the generator makes from the spec and the
// command definitions: a definition changed without go generate fails here
// (and in CI).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	out, err := exec.Command("go", "run", "./internal/cmdspec/gen", "-check").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// Both twins of every generated command write the same bytes: a Client
// method and its Batch method send one command, the same. (They call the
// same definition; this holds whatever the generator does.)
func TestTwinsWriteTheSameBytes(t *testing.T) {
	rec := &wireRecorder{}
	// Valkey 9.1 has every command zipline types, so none is refused
	// before it is written.
	srv := testkit.NewServer(t, testkit.Config{Kind: testkit.Valkey})
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Hooks: []Hook{rec}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	client, batch := reflect.ValueOf(c), reflect.TypeFor[*Batch]()
	checked := 0
	for i := range client.NumMethod() {
		m := client.Type().Method(i)
		bm, ok := batch.MethodByName(m.Name)
		if !ok || m.Type.NumIn() < 2 || m.Type.In(1) != reflect.TypeFor[context.Context]() {
			continue
		}
		if m.Name == "Keys" || m.Name == "DBSize" || strings.HasPrefix(m.Name, "Flush") || m.Name == "Do" {
			continue // hand-written Client methods: every shard, or any command
		}
		args := sampleArgs(m.Type, 2)
		if m.Name == "HSetStruct" { // a struct, where sampleArgs gives an any nil
			args[1] = reflect.ValueOf(any(struct {
				Name string `redis:"name"`
			}{"s"}))
		}
		rec.wire = nil
		cargs := append([]reflect.Value{reflect.ValueOf(ctx)}, args...)
		var out []reflect.Value
		if m.Type.IsVariadic() {
			out = client.Method(i).CallSlice(cargs)
		} else {
			out = client.Method(i).Call(cargs)
		}
		if err, _ := out[len(out)-1].Interface().(error); errors.Is(err, ErrNotAllowed) {
			continue // a connection-state command, refused on the shared connection
		}
		clientWire := rec.wire
		b := c.Batch()
		if m.Type.IsVariadic() {
			reflect.ValueOf(b).MethodByName(bm.Name).CallSlice(args)
		} else {
			reflect.ValueOf(b).MethodByName(bm.Name).Call(args)
		}
		rec.wire = nil
		b.Exec(ctx)
		if len(clientWire) == 0 {
			t.Errorf("%s: nothing written", m.Name)
		}
		if !bytes.Equal(clientWire, rec.wire) {
			t.Errorf("%s: Client wrote %q, Batch %q", m.Name, clientWire, rec.wire)
		}
		checked++
	}
	if checked < 150 {
		t.Fatalf("only %d commands checked", checked)
	}
	t.Logf("%d commands checked", checked)
}

// wireRecorder is a hook that records the commands it sees and answers
// them itself with an error, so that nothing reaches the server.
type wireRecorder struct{ wire []byte }

var errRecorded = errors.New("recorded")

func (r *wireRecorder) DialHook(next DialFunc) DialFunc { return next }
func (r *wireRecorder) ProcessHook(next ProcessFunc) ProcessFunc {
	return func(ctx context.Context, cmd *Cmd) error {
		r.wire = append(r.wire, cmd.wire...)
		cmd.SetReply(Value{}, errRecorded)
		return nil
	}
}
func (r *wireRecorder) ProcessBatchHook(next ProcessBatchFunc) ProcessBatchFunc {
	return func(ctx context.Context, cmds []*Cmd) error {
		for _, cmd := range cmds {
			r.wire = append(r.wire, cmd.wire...)
			cmd.SetReply(Value{}, errRecorded)
		}
		return nil
	}
}

// sampleArgs makes arguments for a method's parameters from index from
// on: a value of each type, with something in it.
func sampleArgs(ft reflect.Type, from int) []reflect.Value {
	var out []reflect.Value
	for i := from; i < ft.NumIn(); i++ {
		out = append(out, sample(ft.In(i), i))
	}
	return out
}

func sample(t reflect.Type, seed int) reflect.Value {
	switch t {
	case reflect.TypeFor[time.Duration]():
		return reflect.ValueOf(1500 * time.Millisecond)
	case reflect.TypeFor[time.Time]():
		return reflect.ValueOf(time.UnixMilli(1_900_000_000_123))
	case reflect.TypeFor[Expiry]():
		return reflect.ValueOf(EX(10 * time.Second))
	case reflect.TypeFor[ExpireCond]():
		return reflect.ValueOf(IfLater)
	case reflect.TypeFor[XTrimArgs](): // one strategy: both are refused before sending
		return reflect.ValueOf(XTrimArgs{MaxLen: 5, Approx: true, Limit: 3})
	case reflect.TypeFor[XAddArgs]():
		return reflect.ValueOf(XAddArgs{Stream: "s", MinID: "1-1", Approx: true, Limit: 3, ID: "2-1",
			Values: []FieldValue{{Field: "f", Value: []byte("v")}}})
	}
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", seed%3))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(seed))
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("value"))
			break
		}
		n := 2
		if t.Elem() == reflect.TypeFor[Expiry]() {
			n = 1 // one expiry per command
		}
		v = reflect.MakeSlice(t, n, n)
		for j := range n {
			v.Index(j).Set(sample(t.Elem(), seed+j))
		}
	case reflect.Struct:
		for j := range t.NumField() {
			if t.Field(j).IsExported() {
				v.Field(j).Set(sample(t.Field(j).Type, seed+j))
			}
		}
	}
	return v
}

// A server is refused only the commands it is known to lack: its kind's
// spec server lacks them and it is no newer, or the overlay says which
// version added them and it is older.
func TestMissingOn(t *testing.T) {
	redis := func(v string) serverVersion { return serverVersion{kind: serverRedis, version: v} }
	spec := specServers[serverRedis].version
	for _, tc := range []struct {
		spec    *commandSpec
		server  serverVersion
		missing bool
	}{
		{specGET, redis(spec), false},
		{specDELIFEQ, redis(spec), true},      // Valkey only, no Redis version known
		{specDELIFEQ, redis("99.0.0"), false}, // a newer Redis may have it
		{specHEXPIRE, redis(spec), true},      // Redis 7.4
		{specHEXPIRE, redis("7.4.0"), false},  // the overlay's version
		{specHEXPIRE, redis("7.2.4"), true},   //
		{specDELIFEQ, serverVersion{}, false}, // a server that did not say
		{specDELIFEQ, serverVersion{kind: serverValkey, version: "8.0.0"}, true},
		{specDELIFEQ, serverVersion{kind: serverValkey, version: "9.0.0"}, false},
	} {
		if got := tc.spec.missingOn(tc.server) != ""; got != tc.missing {
			t.Errorf("%s on %s %s: missing %v, want %v", tc.spec.fullName(), tc.server.kind, tc.server.version, got, tc.missing)
		}
	}
}
