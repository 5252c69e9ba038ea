package testkit

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// token logs as a secret through a LogValuer.
type token string

func (t token) LogValue() slog.Value { return slog.StringValue("tok:" + string(t)) }

type config struct {
	User string
	Pass string
}

func TestLogRecorderRendersEverything(t *testing.T) {
	var rec LogRecorder
	log := slog.New(&rec)
	log.Debug("plain")
	log.With("conn", 3).WithGroup("g").Info("dial",
		"addr", "127.0.0.1:1",
		slog.Group("sub", "raw", []byte("a b\x00\"c")),
		"tok", token("t1"),
		"err", errors.New("boom"),
		"cfg", config{"u", "p w"},
		slog.Group("", "inline", true),
	)
	log.WithGroup("").With(slog.Group("empty")).Warn("warn", "n", 1.5)

	want := []string{
		"DEBUG plain",
		"INFO dial conn=3 g.addr=127.0.0.1:1 g.sub.raw=a b\x00\"c g.tok=tok:t1 g.err=boom g.cfg={User:u Pass:p w} g.inline=true",
		"WARN warn n=1.5",
	}
	got := rec.Lines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%q\nwant:\n%q", got, want)
	}
	if !rec.Enabled(t.Context(), slog.LevelDebug-100) {
		t.Fatal("a level below debug is not recorded")
	}
}

func TestLogRecorderConcurrent(t *testing.T) {
	var rec LogRecorder
	log := slog.New(&rec)
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := log.With("w", w)
			for i := range each {
				l.Info("msg", "i", i)
				if i%50 == 0 {
					rec.Lines() // reading while others write
				}
			}
		}()
	}
	wg.Wait()
	lines := rec.Lines()
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	seen := make(map[string]bool)
	for _, l := range lines {
		seen[l] = true
	}
	for w := range writers {
		for i := range each {
			if l := fmt.Sprintf("INFO msg w=%d i=%d", w, i); !seen[l] {
				t.Fatalf("missing %q", l)
			}
		}
	}
}

// hiddenCause hides its cause from Error but still wraps it.
type hiddenCause struct{ cause error }

func (e hiddenCause) Error() string { return "request failed" }
func (e hiddenCause) Unwrap() error { return e.cause }

func TestCheckSecrets(t *testing.T) {
	password, value := []byte("hunter2-pw"), []byte("val\"ue\n")
	secrets := [][]byte{password, value, nil}

	var rec LogRecorder
	log := slog.New(&rec)
	log.Info("connected", "user", "default")
	cleanErr := fmt.Errorf("get %q: %w", "key", errors.New("timeout"))
	if err := CheckSecrets(secrets, &rec, cleanErr, nil); err != nil {
		t.Fatalf("false positive: %v", err)
	}

	cases := []struct {
		name string
		log  func()
		err  error
	}{
		{"attribute", func() { log.Warn("auth", "pass", password) }, nil},
		{"message", func() { log.Error("bad reply " + string(value)) }, nil},
		{"group attr", func() { log.With("c", 1).WithGroup("g").Info("x", "v", string(value)) }, nil},
		{"error text", nil, fmt.Errorf("AUTH %s failed", password)},
		{"quoted in error", nil, fmt.Errorf("unexpected %q", value)},
		{"hidden in chain", nil, hiddenCause{fmt.Errorf("wrong pass %s", password)}},
		{"joined", nil, errors.Join(errors.New("a"), errors.New(string(value)))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rec LogRecorder
			log = slog.New(&rec)
			if c.log != nil {
				c.log()
			}
			err := CheckSecrets(secrets, &rec, cleanErr, c.err)
			if err == nil {
				t.Fatal("leak not found")
			}
			var tb fakeTB
			ExpectNoSecrets(&tb, secrets, &rec, c.err)
			if len(tb.errs) != 1 {
				t.Fatalf("ExpectNoSecrets reported %d errors", len(tb.errs))
			}
		})
	}
	if err := CheckSecrets(secrets, nil); err != nil {
		t.Fatal(err)
	}
}
