package zipline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline"
)

// exampleAddr is the server the examples run against: in this package's
// tests, one TestMain starts (an Example has no testing.T to start one
// with); in an application, its own.
func exampleAddr() string {
	if addr := os.Getenv("ZIPLINE_EXAMPLE_ADDR"); addr != "" {
		return addr
	}
	return "127.0.0.1:6379"
}

// One Client per process, shared by every goroutine: each call is
// pipelined with the others on one connection.
func ExampleClient() {
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: exampleAddr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	if err := c.Set(ctx, "example:user:1", []byte(`{"name":"Ada"}`), zipline.EX(10*time.Minute)); err != nil {
		fmt.Println(err)
		return
	}
	v, err := c.Get(ctx, "example:user:1")
	fmt.Println(string(v), err)

	_, err = c.Get(ctx, "example:user:2")
	fmt.Println(errors.Is(err, zipline.Nil))

	n, err := c.Del(ctx, "example:user:1")
	fmt.Println(n, err)
	// Output:
	// {"name":"Ada"} <nil>
	// true
	// 1 <nil>
}

// A Batch sends its commands in one round trip; each result is read after
// Exec.
func ExampleClient_Batch() {
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: exampleAddr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	b := c.Batch()
	b.Set("example:batch:name", []byte("Ada"))
	name := b.Get("example:batch:name")
	visits := b.Incr("example:batch:visits")
	b.Del("example:batch:name", "example:batch:visits")
	if err := b.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(name.Val()), visits.Val())
	// Output:
	// Ada 1
}

// Watch runs an optimistic transaction: the Tx fails with ErrTxFailed if
// a watched key changed since it was read, and the function runs again.
func ExampleClient_Watch() {
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: exampleAddr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Set(ctx, "example:balance", []byte("100")); err != nil {
		fmt.Println(err)
		return
	}
	defer c.Del(ctx, "example:balance")

	withdraw := func(amount int) error {
		for {
			err := c.Watch(ctx, func(w *zipline.Client) error {
				v, err := w.Get(ctx, "example:balance")
				if err != nil {
					return err
				}
				balance, err := strconv.Atoi(string(v))
				if err != nil {
					return err
				}
				if balance < amount {
					return errors.New("insufficient funds")
				}
				tx := w.Tx()
				tx.Set("example:balance", []byte(strconv.Itoa(balance-amount)))
				return tx.Exec(ctx)
			}, "example:balance")
			if !errors.Is(err, zipline.ErrTxFailed) {
				return err
			}
		}
	}
	fmt.Println(withdraw(30))
	fmt.Println(withdraw(80))
	v, _ := c.Get(ctx, "example:balance")
	fmt.Println(string(v))
	// Output:
	// <nil>
	// insufficient funds
	// 70
}

// Reads through Cached are served from the process until the server says
// the key changed (CLIENT TRACKING) or the TTL given to Cached passes.
func ExampleClient_Cached() {
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: exampleAddr(), ClientCache: zipline.ClientCache{MaxBytes: 64 << 20}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Set(ctx, "example:config", []byte("v1")); err != nil {
		fmt.Println(err)
		return
	}
	defer c.Del(ctx, "example:config")

	cached := c.Cached(time.Minute)
	for range 3 {
		v, err := cached.Get(ctx, "example:config")
		fmt.Println(string(v), err)
	}
	st := c.Stats().Cache
	fmt.Println("misses:", st.Misses, "hits:", st.Hits)
	// Output:
	// v1 <nil>
	// v1 <nil>
	// v1 <nil>
	// misses: 1 hits: 2
}
