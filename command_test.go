package zipline

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every command a Client runs, a Batch (and so a Tx) can queue: same name,
// same arguments without the context, a Future of the same result. The
// exceptions are not single commands.
func TestEveryClientCommandHasABatchTwin(t *testing.T) {
	notCommands := map[string]string{
		"Watch":            "runs a callback on a dedicated connection",
		"Dedicated":        "lends a connection",
		"Scan":             "iterates over many commands",
		"SScan":            "iterates over many commands",
		"HScan":            "iterates over many commands",
		"ZScan":            "iterates over many commands",
		"Subscribe":        "opens a subscription",
		"PSubscribe":       "opens a subscription",
		"SSubscribe":       "opens a subscription",
		"HScanFields":      "iterates over many commands",
		"Pipelined":        "runs a batch",
		"TxPipelined":      "runs a transaction",
		"HGetStruct":       "fills a struct the caller gives: Batch.HMGet and FieldMap-style Scan do it in a batch",
		"RenewCredentials": "authenticates the open connections again",
	}
	ctxType := reflect.TypeFor[context.Context]()
	errType := reflect.TypeFor[error]()
	client, batch := reflect.TypeFor[*Client](), reflect.TypeFor[*Batch]()
	checked := 0
	for i := range client.NumMethod() {
		m := client.Method(i)
		ft := m.Type // receiver first
		if ft.NumIn() < 2 || ft.In(1) != ctxType || notCommands[m.Name] != "" {
			continue
		}
		checked++
		bm, ok := batch.MethodByName(m.Name)
		if !ok {
			t.Errorf("Client.%s has no Batch twin", m.Name)
			continue
		}
		bt := bm.Type
		if bt.NumIn() != ft.NumIn()-1 || bt.IsVariadic() != ft.IsVariadic() {
			t.Errorf("Batch.%s takes %d arguments, Client.%s %d besides its context", m.Name, bt.NumIn()-1, m.Name, ft.NumIn()-2)
			continue
		}
		for j := 2; j < ft.NumIn(); j++ {
			if bt.In(j-1) != ft.In(j) {
				t.Errorf("Batch.%s argument %d is %v, Client's is %v", m.Name, j-1, bt.In(j-1), ft.In(j))
			}
		}
		want := "bool" // an error-only command's future reports success
		if ft.NumOut() == 2 {
			want = ft.Out(0).String()
		} else if ft.NumOut() != 1 || ft.Out(0) != errType {
			t.Errorf("Client.%s returns %d values", m.Name, ft.NumOut())
			continue
		}
		got := "none"
		if bt.NumOut() == 1 {
			// Type arguments are spelled with their full package path.
			got = strings.ReplaceAll(bt.Out(0).String(), "github.com/ziplinekv/zipline.", "zipline.")
		}
		if wantFuture := "*zipline.Future[" + want + "]"; got != wantFuture {
			t.Errorf("Batch.%s returns %s, want %s", m.Name, got, wantFuture)
		}
	}
	if checked < 90 {
		t.Fatalf("only %d Client commands found: the test no longer sees them", checked)
	}
	t.Logf("%d commands checked", checked)
}

// Do's arguments are encoded as go-redis encodes them.
func TestDoArgumentEncoding(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	cases := []struct {
		arg  any
		want string
	}{
		{nil, ""},
		{int8(-3), "-3"},
		{uint64(1 << 63), "9223372036854775808"},
		{true, "1"},
		{false, "0"},
		{1.5, "1.5"},
	}
	for _, tc := range cases {
		v, err := c.Do(ctx, "ECHO", tc.arg)
		if s, _ := v.AsString(); err != nil || s != tc.want {
			t.Errorf("ECHO %#v: %q %v, want %q", tc.arg, s, err, tc.want)
		}
	}
	v, err := c.Do(ctx, "ECHO", 1500*time.Millisecond)
	if s, _ := v.AsString(); err != nil || s != "1500000000" {
		t.Errorf("ECHO time.Duration: %q %v, want nanoseconds", s, err)
	}
	ts := timeAt("2026-11-22T10:00:00.5Z")
	v, err = c.Do(ctx, "ECHO", ts)
	if s, _ := v.AsString(); err != nil || s != "2026-11-22T10:00:00.5Z" {
		t.Errorf("ECHO time.Time: %q %v, want RFC 3339 with nanoseconds", s, err)
	}
	if _, err := c.Do(ctx, "ECHO", struct{}{}); err == nil || !strings.Contains(err.Error(), "argument 1") {
		t.Errorf("unencodable argument: %v", err)
	}
}

func timeAt(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Commands lists exactly the Client's command methods, so that a fake
// built on it covers everything code written against *Client can call.
func TestCommandsInterfaceIsComplete(t *testing.T) {
	ctxType := reflect.TypeFor[context.Context]()
	iface, client := reflect.TypeFor[Commands](), reflect.TypeFor[*Client]()
	for i := range client.NumMethod() {
		m := client.Method(i)
		if m.Type.NumIn() < 2 || m.Type.In(1) != ctxType || m.Name == "Watch" || m.Name == "Dedicated" ||
			m.Name == "RenewCredentials" || strings.HasSuffix(m.Name, "Subscribe") {
			continue
		}
		if _, ok := iface.MethodByName(m.Name); !ok {
			t.Errorf("Commands lacks %s", m.Name)
		}
	}
	if iface.NumMethod() < 90 {
		t.Fatalf("Commands has only %d methods", iface.NumMethod())
	}
}

// Expiry.TTL gives back the duration each Expiry sets.
func TestExpiryTTL(t *testing.T) {
	for _, c := range []struct {
		e    Expiry
		want time.Duration
	}{
		{EX(2 * time.Second), 2 * time.Second},
		{EX(1500 * time.Millisecond), 1500 * time.Millisecond},
		{PX(250 * time.Millisecond), 250 * time.Millisecond},
		{PX(time.Microsecond), time.Millisecond}, // rounded up, as sent
		{KeepTTL(), 0},
	} {
		if got := c.e.TTL(); got != c.want {
			t.Errorf("%+v.TTL() = %v, want %v", c.e, got, c.want)
		}
	}
	if d := ExpireAt(time.Now().Add(time.Hour)).TTL(); d <= 59*time.Minute || d > time.Hour {
		t.Errorf("ExpireAt(now+1h).TTL() = %v", d)
	}
}
