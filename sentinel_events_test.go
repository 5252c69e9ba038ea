package zipline

import (
	"testing"
)

// The events a failover's writes hold hangs on, as Redis and Valkey
// sentinels word them.
func TestParseSentinelEvent(t *testing.T) {
	for _, c := range []struct {
		channel, payload string
		want             sentinelEvent
		ok               bool
	}{
		{"+try-failover", "master g 10.0.0.1 6379", sentinelEvent{kind: evTrying, master: "10.0.0.1:6379"}, true},
		{"+failover-state-send-slaveof-noone", "slave 10.0.0.2:6379 10.0.0.2 6379 @ g 10.0.0.1 6379",
			sentinelEvent{kind: evFailingOver, addr: "10.0.0.2:6379", master: "10.0.0.1:6379"}, true},
		{"+promoted-slave", "slave 10.0.0.2:6379 10.0.0.2 6379 @ g 10.0.0.1 6379",
			sentinelEvent{kind: evPromoted, addr: "10.0.0.2:6379", master: "10.0.0.1:6379"}, true},
		{"+switch-master", "g 10.0.0.1 6379 10.0.0.2 6379", sentinelEvent{kind: evSwitched, addr: "10.0.0.2:6379"}, true},
		{"-failover-abort-not-elected", "master g 10.0.0.1 6379", sentinelEvent{kind: evAborted, master: "10.0.0.1:6379"}, true},
		{"+try-failover", "master other 10.0.0.1 6379", sentinelEvent{}, false},
		{"+try-failover", "master g", sentinelEvent{}, false},
		{"+promoted-slave", "slave 10.0.0.2:6379 10.0.0.2 6379 @ g", sentinelEvent{}, false},
	} {
		got, ok := parseSentinelEvent(c.channel, c.payload, "g")
		if ok != c.ok || got != c.want {
			t.Errorf("%s %q: %+v %v, want %+v %v", c.channel, c.payload, got, ok, c.want, c.ok)
		}
	}
}

// A failover's start holds writes to the primary it names; an abort ends
// the hold only once every sentinel that tried has given up (one not
// elected aborts while the leader may still be promoting); an event about
// a primary already replaced holds nothing.
func TestSentinelHoldFollowsEveryTryingSentinel(t *testing.T) {
	k := &sentinel{s: &shared{opts: Options{Logger: quiet}}, name: "g", changed: make(chan struct{})}
	k.view.Store(&sentinelView{primary: &node{addr: "10.0.0.1:6379"}})
	held := func() bool { return k.holdUntil.Load() != 0 }
	ev := func(kind eventKind, from, master string) sentinelEvent {
		return sentinelEvent{kind: kind, from: from, master: master}
	}

	k.apply(ev(evTrying, "s1", "10.0.0.9:6379")) // a former primary's
	if held() {
		t.Fatal("a failover of another primary held writes")
	}
	k.apply(ev(evTrying, "s1", "10.0.0.1:6379"))
	k.apply(ev(evTrying, "s2", "10.0.0.1:6379"))
	if !held() {
		t.Fatal("+try-failover of the primary did not hold writes")
	}
	k.apply(ev(evAborted, "s1", "10.0.0.1:6379"))
	if !held() {
		t.Fatal("one sentinel's abort released the hold while another still tries")
	}
	k.apply(ev(evAborted, "s2", "10.0.0.9:6379")) // about another primary
	if !held() {
		t.Fatal("an abort about another primary released the hold")
	}
	k.apply(ev(evAborted, "s2", "10.0.0.1:6379"))
	if held() {
		t.Fatal("the hold outlived every trying sentinel's abort")
	}
	k.apply(ev(evFailingOver, "s3", "10.0.0.1:6379"))
	if !held() {
		t.Fatal("the leader's send-slaveof-noone did not hold writes")
	}
	k.releaseWrites()
	if held() || len(k.trying) != 0 {
		t.Fatal("releaseWrites left a hold or a trying sentinel")
	}
}
