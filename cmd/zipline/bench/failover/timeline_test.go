package failover

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
)

// A synthetic run: a call every 1 ms taking 1 ms, the kill at 1 s, calls
// failing from +20 ms to +300 ms and slow until +500 ms, none started from
// +600 to +700 ms (every goroutine waiting), then normal for 200 ms (Stable)
// and a slow bucket at +900 ms.
func TestTimeline(t *testing.T) {
	cfg := Config{Before: 500 * time.Millisecond, After: time.Second, Stable: 200 * time.Millisecond}
	cfg.defaults()
	const ms = int64(time.Millisecond)
	kill := time.Second
	var rec recorder
	for at := int64(0); at < 2000*ms; at += ms {
		c := call{start: at, latency: ms}
		rel := at - int64(kill)
		switch {
		case rel >= 20*ms && rel <= 300*ms:
			c.err = fmt.Errorf("wrapped: %w", zipline.ErrConnLost)
		case rel > 300*ms && rel < 500*ms:
			c.latency = 50 * ms
		case rel >= 600*ms && rel < 700*ms:
			continue
		case rel >= 900*ms && rel < 910*ms: // a lone spike, after recovery
			c.latency = 9 * ms
		}
		rec.calls = append(rec.calls, c)
	}
	// A call in flight at the kill that fails 30 ms after it.
	rec.calls = append(rec.calls, call{start: int64(kill) - 5*ms, latency: 35 * ms, err: context.DeadlineExceeded})
	tl := cfg.timeline([]recorder{rec}, kill, kill+1050*time.Millisecond)

	// The run's last 50 ms are not a whole bucket: left out.
	if len(tl.Buckets) != 15 || tl.Buckets[0].Start != -500*time.Millisecond || tl.Buckets[14].Start != 900*time.Millisecond {
		t.Fatalf("%d buckets from %v", len(tl.Buckets), tl.Buckets[0].Start)
	}
	if tl.BaselineP99 != time.Millisecond {
		t.Errorf("baseline p99 %v, want 1ms", tl.BaselineP99)
	}
	if tl.FirstErr != 21*time.Millisecond || tl.LastErr != 301*time.Millisecond {
		t.Errorf("errors from %v to %v, want 21ms to 301ms (when the calls returned)", tl.FirstErr, tl.LastErr)
	}
	if tl.Recovered != 700*time.Millisecond {
		t.Errorf("recovered at %v, want 700ms", tl.Recovered)
	}
	if tl.Buckets[11].Calls != 0 || tl.Buckets[11].P99 != 0 { // +600 ms
		t.Errorf("the empty bucket: %+v", tl.Buckets[11])
	}
	if tl.Errors != 282 || len(tl.Classes) != 2 || tl.Classes[0] != (Class{"zipline.ErrConnLost", 281}) ||
		tl.Classes[1] != (Class{"deadline exceeded", 1}) {
		t.Errorf("%d errors, classes %v", tl.Errors, tl.Classes)
	}
	if tl.Before != (Phase{500 * time.Millisecond, 500, 1}) || tl.During != (Phase{700 * time.Millisecond, 319, 281}) ||
		tl.After != (Phase{300 * time.Millisecond, 300, 0}) {
		t.Errorf("phases %+v %+v %+v", tl.Before, tl.During, tl.After)
	}
	if b := tl.Buckets[9]; b.P99 != 50*time.Millisecond || b.Calls != 100 { // +400 ms
		t.Errorf("bucket at +400ms: %+v", b)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", context.DeadlineExceeded), "deadline exceeded"},
		{fmt.Errorf("x: %w", zipline.ErrNotConnected), "zipline.ErrNotConnected (ErrNotSent)"},
		{&zipline.ServerError{Prefix: "CLUSTERDOWN", Message: "CLUSTERDOWN The cluster is down"}, "CLUSTERDOWN (server)"},
		{errors.New("CLUSTERDOWN The cluster is down"), "CLUSTERDOWN (server)"},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), "connection refused"},
		{errors.New("read: EOF"), "EOF"},
		{errors.New("something else entirely"), "something else entirely"},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
