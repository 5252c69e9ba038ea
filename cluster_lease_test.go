package zipline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// A transaction inside a cluster Watch that touches a key of another slot
// fails at once with a *CrossSlotError, fn run once, as the same Tx does
// outside Watch: the server's MOVED for it used to read as "the slot
// moved", and Watch ran fn 65 times over 9 s.
func TestClusterWatchCrossSlotTxFailsAtOnce(t *testing.T) {
	c, _ := clusterClient(t, testkit.Redis, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	mustOK(t, c.Set(ctx, "{acct:7}:balance", []byte("10")))
	for _, other := range []string{"other", "other:2"} { // slots other than {acct:7}'s, on its node or not
		if keySlot(other) == keySlot("{acct:7}") {
			t.Fatalf("%s shares the watched slot", other)
		}
		runs := 0
		start := time.Now()
		err := c.Watch(ctx, func(cl *Client) error {
			runs++
			tx := cl.Tx()
			tx.IncrBy("{acct:7}:balance", 1)
			tx.Set(other, []byte("x"))
			return tx.Exec(ctx)
		}, "{acct:7}:balance")
		var cse *CrossSlotError
		if !errors.As(err, &cse) || runs != 1 || time.Since(start) > time.Second {
			t.Errorf("cross-slot Tx in Watch: %v, fn ran %d times in %v; want a *CrossSlotError at once, fn run once",
				err, runs, time.Since(start).Round(time.Millisecond))
		}
		// A plain command for another slot inside fn fails the same way.
		runs = 0
		err = c.Watch(ctx, func(cl *Client) error {
			runs++
			_, err := cl.Get(ctx, other)
			return err
		}, "{acct:7}:balance")
		if !errors.As(err, &cse) || runs != 1 {
			t.Errorf("GET of another slot in Watch: %v, fn ran %d times", err, runs)
		}
	}
	// The same-slot transaction still runs.
	err := c.Watch(ctx, func(cl *Client) error {
		tx := cl.Tx()
		tx.IncrBy("{acct:7}:balance", 1)
		tx.Set("{acct:7}:log", []byte("x"))
		return tx.Exec(ctx)
	}, "{acct:7}:balance")
	if err != nil {
		t.Fatal(err)
	}
	if v := must(c.Get(ctx, "{acct:7}:balance"))(t); string(v) != "11" {
		t.Errorf("balance %s, want 11", v)
	}
}

// A Client from Dedicated on a cluster is one connection, to the node of
// its first command's slot: a key another node serves is refused with a
// *NodeBoundError that says so, where the server's raw MOVED used to come
// back.
func TestClusterDedicatedIsBoundToOneNode(t *testing.T) {
	c, cl := clusterClient(t, testkit.Redis, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := c.Dedicated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mustOK(t, d.Set(ctx, "{a}1", []byte("x")))
	home, _ := cl.KeyOwner(ctx, "{a}1")
	var other string
	for i := 0; other == ""; i++ {
		k := "k" + strings.Repeat("x", i)
		if o, _ := cl.KeyOwner(ctx, k); o != home {
			other = k
		}
	}
	_, err = d.Get(ctx, other)
	var nb *NodeBoundError
	if !errors.As(err, &nb) || !errors.Is(err, ErrNotSent) || nb.Slot != keySlot(other) {
		t.Fatalf("GET of a key on another node: %v, want a *NodeBoundError", err)
	}
	if v, err := d.Get(ctx, "{a}1"); err != nil || string(v) != "x" {
		t.Fatalf("the bound node's key: %q %v", v, err)
	}
}
