package cache

// Tests across client processes: the test binary runs itself as child
// processes (TestChildProcess, selected by the environment), all talking
// to one redis-server started by the parent.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// The environment of a child process.
const (
	envRole    = "ZIPLINE_CACHE_TEST_ROLE" // "stampede" or "holder"
	envAddr    = "ZIPLINE_CACHE_TEST_ADDR"
	envLockTTL = "ZIPLINE_CACHE_TEST_LOCK_TTL"
	envProcs   = "ZIPLINE_CACHE_TEST_PROCS"
)

// childReport is what a child prints on its last line of output.
type childReport struct {
	Loads     uint64
	LockWaits uint64
	Misses    uint64
	Errors    []string
}

const reportPrefix = "CHILD-REPORT "

// Keys the children and the parent share.
const (
	hotKey       = "hot"
	readyKey     = "test:ready"   // INCR by each child once connected
	goKey        = "test:go"      // set by the parent to start the children
	arrivedKey   = "test:arrived" // INCR by each child as it starts fetching
	loadsKey     = "test:loads"   // INCR by every loader call, in any process
	loadingKey   = "test:loading" // set by the holder's loader
	hotValueName = "from the loader"
)

// TestChildProcess is the body of a child process; run directly, it skips.
func TestChildProcess(t *testing.T) {
	role := os.Getenv(envRole)
	if role == "" {
		t.Skip("run by the multi-process tests")
	}
	lockTTL, err := time.ParseDuration(os.Getenv(envLockTTL))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, os.Getenv(envAddr))
	users := New[user](c, Options{LockTTL: lockTTL})
	ctx := testCtx(t, 20*time.Second)
	var rep childReport
	switch role {
	case "stampede":
		procs, _ := strconv.Atoi(os.Getenv(envProcs))
		rep.Errors = childStampede(ctx, c, users, procs)
	case "holder":
		// Take the lock and load forever: the parent kills this process.
		_, err := users.Fetch(ctx, hotKey, func(ctx context.Context) (user, error) {
			if _, err := c.Incr(ctx, loadsKey); err != nil {
				return user{}, err
			}
			if err := c.Set(ctx, loadingKey, []byte("1")); err != nil {
				return user{}, err
			}
			<-ctx.Done()
			return user{}, ctx.Err()
		})
		rep.Errors = append(rep.Errors, fmt.Sprintf("the holder was not killed: %v", err))
	default:
		t.Fatalf("unknown role %q", role)
	}
	st := users.Stats()
	rep.Loads, rep.LockWaits, rep.Misses = st.Loads, st.LockWaits, st.Misses
	b, _ := json.Marshal(rep)
	fmt.Printf("\n%s%s\n", reportPrefix, b)
}

// childStampede waits for the parent's signal, then misses the hot key
// from 1,000 goroutines at once. A loader returns only once every goroutine
// of every process has looked the key up (so all of them miss) and every
// goroutine here waits for it: the stampede is real in both dimensions.
func childStampede(ctx context.Context, c *zipline.Client, users *Cache[user], procs int) (errs []string) {
	if _, err := c.Incr(ctx, readyKey); err != nil {
		return []string{err.Error()}
	}
	if !poll(ctx, func() bool { _, err := c.Get(ctx, goKey); return err == nil }) {
		return []string{"no start signal"}
	}
	const n = 1000
	load := func(ctx context.Context) (user, error) {
		if _, err := c.Incr(ctx, loadsKey); err != nil {
			return user{}, err
		}
		// Every process has looked the key up from all its goroutines, and
		// every goroutine here waits for this load.
		poll(ctx, func() bool {
			b, err := c.Get(ctx, arrivedKey)
			return err == nil && string(b) == strconv.Itoa(procs)
		})
		poll(ctx, func() bool { return users.flights.waiting(hotKey) == n })
		return user{ID: 1, Name: hotValueName}, nil
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			u, err := users.Fetch(ctx, hotKey, load)
			if err == nil && u.Name != hotValueName {
				err = fmt.Errorf("got %+v", u)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
			}
		})
	}
	if !poll(ctx, func() bool { st := users.Stats(); return st.Hits+st.Misses == n }) {
		errs = append(errs, "the goroutines did not all look the key up")
	} else if _, err := c.Incr(ctx, arrivedKey); err != nil {
		errs = append(errs, err.Error())
	}
	wg.Wait()
	return errs
}

// poll checks cond every millisecond, for at most 10 s or until ctx ends,
// and reports whether it held.
func poll(ctx context.Context, cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// startChild runs the test binary as a child process in role.
func startChild(t *testing.T, ctx context.Context, s *testkit.Server, role string, lockTTL time.Duration, procs int) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		envRole+"="+role, envAddr+"="+s.Addr, envLockTTL+"="+lockTTL.String(), envProcs+"="+strconv.Itoa(procs))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out
}

// report parses a finished child's report.
func report(t *testing.T, out *bytes.Buffer) childReport {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), reportPrefix); ok {
			var rep childReport
			if err := json.Unmarshal([]byte(line), &rep); err != nil {
				t.Fatal(err)
			}
			return rep
		}
	}
	t.Fatalf("a child printed no report:\n%s", out.Bytes())
	return childReport{}
}

// counter returns the integer at key (0 if missing).
func counter(t *testing.T, s *testkit.Server, key string) int64 {
	t.Helper()
	v, err := s.Do(context.Background(), "GET", key)
	if err != nil {
		t.Fatal(err)
	}
	if v.IsNull() {
		return 0
	}
	n, err := strconv.ParseInt(string(v.Bytes()), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStampedeProcesses: 4 processes × 1,000 goroutines miss one key at
// once. With the lock the loader runs once in all; without it (LockTTL < 0),
// once per process.
func TestStampedeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	const procs = 4
	for _, tc := range []struct {
		name    string
		lockTTL time.Duration
	}{{"lock", 5 * time.Second}, {"nolock", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			ctx := testCtx(t, 30*time.Second)
			type child struct {
				cmd *exec.Cmd
				out *bytes.Buffer
			}
			var children []child
			for range procs {
				cmd, out := startChild(t, ctx, s, "stampede", tc.lockTTL, procs)
				children = append(children, child{cmd, out})
			}
			waitFor(t, 20*time.Second, "the children to connect", func() bool { return counter(t, s, readyKey) == procs })
			if _, err := s.Do(ctx, "SET", goKey, "1"); err != nil {
				t.Fatal(err)
			}
			var loads, waits, misses uint64
			for i, ch := range children {
				err := ch.cmd.Wait()
				rep := report(t, ch.out)
				if err != nil || len(rep.Errors) > 0 {
					t.Fatalf("child %d: %v, errors %q\n%s", i, err, rep.Errors, ch.out.Bytes())
				}
				if rep.Loads > 1 {
					t.Errorf("child %d loaded %d times; want at most once per process", i, rep.Loads)
				}
				loads += rep.Loads
				waits += rep.LockWaits
				misses += rep.Misses
				t.Logf("child %d: loads %d, lock waits %d, misses %d", i, rep.Loads, rep.LockWaits, rep.Misses)
			}
			if onServer := counter(t, s, loadsKey); uint64(onServer) != loads {
				t.Fatalf("the children report %d loads, the server counted %d", loads, onServer)
			}
			switch {
			case misses != procs*1000:
				t.Fatalf("%d misses; want all %d goroutines to miss", misses, procs*1000)
			case tc.lockTTL > 0 && (loads != 1 || waits != procs-1):
				t.Fatalf("with the lock: %d loads, %d lock waits; want 1 load and %d processes waiting", loads, waits, procs-1)
			case tc.lockTTL < 0 && loads != procs:
				t.Fatalf("without the lock: %d loads; want one per process", loads)
			}
		})
	}
}

// TestLockHolderKilled: the process loading a key dies holding its lock.
// A Fetch waiting in another process loads once the lock expires.
func TestLockHolderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	// The lock lives 3 s, not 1: on a loaded machine the child's start, the
	// waiter's first try and the PTTL below could outlast a second, and the
	// lock expire before the test looked at it.
	const lockTTL = 3 * time.Second
	s := newServer(t)
	ctx := testCtx(t, 30*time.Second)
	holder, out := startChild(t, ctx, s, "holder", lockTTL, 1)
	waitFor(t, 20*time.Second, "the child to load", func() bool { return exists(t, s, loadingKey) })

	users := New[user](newClient(t, s.Addr), Options{LockTTL: lockTTL})
	var loadedAt time.Time
	type result struct {
		u   user
		err error
	}
	done := make(chan result, 1)
	go func() {
		u, err := users.Fetch(ctx, hotKey, func(context.Context) (user, error) {
			loadedAt = time.Now()
			return user{ID: 1, Name: hotValueName}, nil
		})
		done <- result{u, err}
	}()
	waitFor(t, 5*time.Second, "the Fetch to wait for the lock", func() bool { return users.Stats().LockWaits == 1 })

	// The lock's expiry is reckoned from before the PTTL was sent: the
	// server read the TTL after that, so the lock expires no earlier. From
	// the reply's arrival, a reply a loaded machine delayed put the expiry
	// too late, and a correct load seemed early.
	asked := time.Now()
	pttl, err := s.Do(ctx, "PTTL", hotKey+lockSuffix)
	lockExpires := asked.Add(time.Duration(pttl.Int()) * time.Millisecond)
	if err != nil || pttl.Int() <= 0 {
		t.Fatalf("PTTL of the holder's lock = %d, %v", pttl.Int(), err)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	if strings.Contains(out.String(), reportPrefix) {
		t.Fatalf("the holder finished instead of being killed:\n%s", out.Bytes())
	}

	select {
	case r := <-done:
		if r.err != nil || r.u.Name != hotValueName {
			t.Fatalf("Fetch = %+v, %v", r.u, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting Fetch did not load after the holder died")
	}
	if loadedAt.Before(lockExpires.Add(-10 * time.Millisecond)) {
		t.Fatalf("loaded %v before the dead holder's lock expired", lockExpires.Sub(loadedAt))
	}
	if st := users.Stats(); st.Loads != 1 || counter(t, s, loadsKey) != 1 {
		t.Fatalf("stats %+v; the server counted %d loads besides this one", st, counter(t, s, loadsKey))
	}
}
