// Package cache is cache-aside on a zipline client: read the cache, and on a
// miss load from the source of truth once, store the result, and hand it to
// every caller that asked in the meantime.
//
//	users := cache.New[User](c, cache.Options{TTL: 10 * time.Minute})
//	u, err := users.Fetch(ctx, "user:1", func(ctx context.Context) (User, error) {
//		return db.LoadUser(ctx, 1) // return cache.ErrNotFound for a missing user
//	})
//
// Values are encoded with a Codec (JSON by default) and stored through the
// client, so its compression applies to them.
//
// # Stampedes
//
// When a hot key expires, every request for it misses at once. Fetch keeps
// that from reaching the database twice:
//
//   - In one process, concurrent misses for a key share one load (single
//     flight). A caller whose context ends stops waiting at once; the load
//     goes on for the others and is cancelled only when no caller is left.
//   - Across processes, the process that loads holds a lock key (the value's
//     key with ":lock" appended, SET NX PX Options.LockTTL, with a random
//     token). Another process that misses finds the lock taken and polls
//     for the value with a backoff from 1 ms to 32 ms, trying the lock again
//     each time, so it sees the value within one poll of its store, and takes
//     the lock itself when the holder released it without storing (its load
//     failed) or died (the lock expired). The holder releases the lock by a
//     script that deletes it only if it still holds the holder's token, so a
//     holder whose lock expired never frees someone else's. A waiter waits
//     at most LockTTL for any one holder; a lock that outlives that (set by
//     something else, without an expiry) is ignored and the waiter loads.
//   - Every try at the lock reads the key right after it, so a process that
//     missed just before another stored the value (and released the lock)
//     finds it there and does not load.
//
// So a key that misses everywhere at once is loaded once in the whole fleet,
// as long as a load takes less than LockTTL. If the server cannot be reached,
// Fetch fails open: it loads from the source, once per process.
//
// With the values on the Client (no Options.Store), a hit costs one round
// trip (GET) and a miss three: the GET; SET NX of the lock with a GET of the
// key, in one batch; and, after the load, the SET of the value with the
// unlock script, in one batch. Another Store takes a round trip more for
// each, as its reads and writes cannot share a batch with the lock's.
//
// # A local tier
//
// With Options.Store set to a Client's client-side cache view
// (c.Cached(ttl).IgnoringKeyTTL(), see zipline.Cached), hits are served
// from the process and invalidated by the server. When T holds nothing a
// caller could modify through a copy (numbers, strings, time.Time, and
// structs and arrays of them: no pointer, slice, map or interface), each
// cached copy is decoded once and its value kept beside it
// (zipline.Cached.GetDecoded), so a hit costs no decoding; values of other
// types are decoded on every hit, so that no caller sees another's
// changes.
//
// # Writes during a load
//
// A load that started before the source changed may return the old
// record after the change was made. Stored then, it would be served until
// its TTL. So Delete and Set revoke the loads of the key under way in this
// process before they write: those do not store what they loaded (their
// callers, who asked before the write, still get it; Stats.Superseded
// counts them), and a Fetch that begins after the write loads again. A
// write from another process has no such hold on this one's loads: the
// window is one load's duration, as with any cache-aside.
//
// # Early refresh
//
// A hot key should be reloaded before it expires, so that its readers never
// miss at all. Fetch uses probabilistic early expiration (XFetch, Vattani,
// Chierichetti and Lowenstein, VLDB 2015): each stored value carries the
// time its load took (delta) and its expiry, and a read refreshes early when
//
//	now + delta * Beta * -ln(rand()) >= expiry
//
// with rand() uniform in (0, 1]. The expected head start is delta*Beta, so a
// slow value is refreshed earlier, and the chance grows with the number of
// readers and as the expiry nears: for a hot key about one read refreshes,
// shortly before expiry, while a cold key is never loaded early. The read that
// decides to refresh returns the current value at once and reloads in the
// background (under the same lock, so one process refreshes); the others go
// on reading the current value until the new one replaces it.
//
// XFetch was chosen over stale-while-revalidate because it never serves a
// value past its TTL, needs no second "stale" TTL or extra memory, and has a
// single knob, Options.Beta: larger refreshes earlier (more loads, fewer
// misses); a negative Beta turns early refresh off.
//
// # Not found and errors
//
// A loader reports a missing record by returning ErrNotFound (or an error
// wrapping it). Fetch caches that answer for Options.NotFoundTTL, shorter than
// TTL by default, and returns ErrNotFound; later Fetches return ErrNotFound
// without loading until it expires. Any other loader error is returned to the
// callers waiting for that load and never cached: the next Fetch loads
// again. A loader that panics gives its callers a *PanicError, and the next
// Fetch loads again.
//
// # Stored format
//
// Each stored value is a small header (format byte, expiry in Unix
// milliseconds, load time in microseconds) followed by the codec's bytes. The
// Cache treats a value past its expiry as missing even if the store still has
// it, so a store need not honour the expiry exactly. A value that does not
// start with a known header (written by something else, or by a future
// format) is a miss and is overwritten by the next load.
package cache
