package zipline

import (
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// The generic key commands. Each is defined once; go generate makes its
// Client and Batch methods (commands_gen.go).

// Del deletes keys and returns how many existed.
//
//zipline:twins Del
func delCmd(keys ...string) command[int64] { return define(decInt, specDEL, keyArgs(keys)...) }

// Unlink deletes keys like Del, reclaiming their memory in the background.
//
//zipline:twins Unlink
func unlinkCmd(keys ...string) command[int64] { return define(decInt, specUNLINK, keyArgs(keys)...) }

// Exists returns how many of keys exist (a key named twice counts twice).
//
//zipline:twins Exists
func existsCmd(keys ...string) command[int64] { return define(decInt, specEXISTS, keyArgs(keys)...) }

// Touch updates the last access time of keys and returns how many exist.
//
//zipline:twins Touch
func touchCmd(keys ...string) command[int64] { return define(decInt, specTOUCH, keyArgs(keys)...) }

// Expire sets key to expire after d (EXPIRE, or PEXPIRE below a second),
// and reports whether the key exists. A positive d under a millisecond
// counts as one millisecond; a d of zero or less deletes the key, as the
// server does.
//
//zipline:twins Expire buf=3
func expireCmd(buf []arg, key string, d time.Duration) command[bool] {
	spec, args := expireArgs(buf, key, d, "", specEXPIRE, specPEXPIRE)
	return define(decBool, spec, args...)
}

// ExpireIf is Expire under a condition (EXPIRE ... NX, XX, GT or LT), and
// reports whether the expiry was set.
//
//zipline:twins ExpireIf buf=3
func expireIfCmd(buf []arg, key string, d time.Duration, cond ExpireCond) command[bool] {
	spec, args := expireArgs(buf, key, d, cond, specEXPIRE, specPEXPIRE)
	return define(decBool, spec, args...)
}

// PExpire is Expire in milliseconds (PEXPIRE), whatever d.
//
//zipline:twins PExpire
func pexpireCmd(key string, d time.Duration) command[bool] {
	return define(decBool, specPEXPIRE, keyArg(key), num(millis(d)))
}

// ExpireAt sets key to expire at t (PEXPIREAT), and reports whether the key
// exists.
//
//zipline:twins ExpireAt
func expireAtCmd(key string, t time.Time) command[bool] {
	return define(decBool, specPEXPIREAT, keyArg(key), num(t.UnixMilli()))
}

// ExpireAtIf is ExpireAt under a condition, and reports whether the
// expiry was set.
//
//zipline:twins ExpireAtIf
func expireAtIfCmd(key string, t time.Time, cond ExpireCond) command[bool] {
	if cond == "" { // no condition: as ExpireAt
		return define(decBool, specPEXPIREAT, keyArg(key), num(t.UnixMilli()))
	}
	return define(decBool, specPEXPIREAT, keyArg(key), num(t.UnixMilli()), str(string(cond)))
}

// ExpireTime returns when key expires, to the second (EXPIRETIME): the
// zero time if it has no expiry, Nil if it does not exist.
//
//zipline:twins ExpireTime
func expireTimeCmd(key string) command[time.Time] {
	return define(decUnixSeconds, specEXPIRETIME, keyArg(key))
}

// PExpireTime is ExpireTime to the millisecond (PEXPIRETIME).
//
//zipline:twins PExpireTime
func pexpireTimeCmd(key string) command[time.Time] {
	return define(decUnixMillis, specPEXPIRETIME, keyArg(key))
}

// Persist removes key's expiry and reports whether it had one.
//
//zipline:twins Persist
func persistCmd(key string) command[bool] { return define(decBool, specPERSIST, keyArg(key)) }

// TTL returns key's remaining time to live in whole seconds. As with
// go-redis, a key with no expiry gives NoExpiry (-1) and a missing key
// NoKey (-2), both with a nil error.
//
//zipline:twins TTL
func ttlCmd(key string) command[time.Duration] { return define(decTTL, specTTL, keyArg(key)) }

// PTTL is TTL with millisecond precision.
//
//zipline:twins PTTL
func pttlCmd(key string) command[time.Duration] { return define(decPTTL, specPTTL, keyArg(key)) }

// Type returns the type of key's value ("string", "hash", ...), or "none".
//
//zipline:twins Type
func typeCmd(key string) command[string] { return define(decStatus, specTYPE, keyArg(key)) }

// Rename renames key to newKey, replacing newKey if it exists.
//
//zipline:twins Rename client=error
func renameCmd(key, newKey string) command[bool] {
	return define(decOK, specRENAME, keyArg(key), keyArg(newKey))
}

// RenameNX renames key to newKey only if newKey does not exist, and
// reports whether it did.
//
//zipline:twins RenameNX
func renameNXCmd(key, newKey string) command[bool] {
	return define(decBool, specRENAMENX, keyArg(key), keyArg(newKey))
}

// Copy copies the value at src to dst, replacing dst's only with replace,
// and reports whether it copied.
//
//zipline:twins Copy
func copyCmd(src, dst string, replace bool) command[bool] {
	if replace {
		return define(decBool, specCOPY, keyArg(src), keyArg(dst), str("REPLACE"))
	}
	return define(decBool, specCOPY, keyArg(src), keyArg(dst))
}

// CopyToDB is Copy into database db (COPY ... DB; not on a cluster).
//
//zipline:twins CopyToDB
func copyToDBCmd(src, dst string, db int, replace bool) command[bool] {
	if replace {
		return define(decBool, specCOPY, keyArg(src), keyArg(dst), str("DB"), num(int64(db)), str("REPLACE"))
	}
	return define(decBool, specCOPY, keyArg(src), keyArg(dst), str("DB"), num(int64(db)))
}

// Move moves key to database db, and reports whether it moved (not on a
// cluster).
//
//zipline:twins Move
func moveCmd(key string, db int) command[bool] {
	return define(decBool, specMOVE, keyArg(key), num(int64(db)))
}

// RandomKey returns a random key of the database, or Nil if it is empty.
//
//zipline:twins RandomKey
func randomKeyCmd() command[string] { return define(decString, specRANDOMKEY) }

// Dump returns key's value serialized (DUMP), for Restore, or Nil if the
// key does not exist. A compressed value is serialized as stored.
//
//zipline:twins Dump
func dumpCmd(key string) command[[]byte] { return define(decBytes, specDUMP, keyArg(key)) }

// Restore creates key from data that Dump returned, with ttl (0: none).
// It fails if key exists; RestoreReplace replaces it.
//
//zipline:twins Restore client=error
func restoreCmd(key string, ttl time.Duration, data []byte) command[bool] {
	return define(decOK, specRESTORE, keyArg(key), num(millis(ttl)), bin(data))
}

// RestoreReplace is Restore replacing key if it exists.
//
//zipline:twins RestoreReplace client=error
func restoreReplaceCmd(key string, ttl time.Duration, data []byte) command[bool] {
	return define(decOK, specRESTORE, keyArg(key), num(millis(ttl)), bin(data), str("REPLACE"))
}

// ObjectEncoding returns how the server stores key's value ("listpack",
// "embstr", ...), or Nil if the key does not exist.
//
//zipline:twins ObjectEncoding
func objectEncodingCmd(key string) command[string] {
	return define(decString, specOBJECT_ENCODING, keyArg(key))
}

// ObjectFreq returns key's access frequency (an LFU maxmemory policy only).
//
//zipline:twins ObjectFreq
func objectFreqCmd(key string) command[int64] { return define(decInt, specOBJECT_FREQ, keyArg(key)) }

// ObjectIdleTime returns how long key has not been read or written, in
// seconds.
//
//zipline:twins ObjectIdleTime
func objectIdleTimeCmd(key string) command[time.Duration] {
	return define(decSeconds, specOBJECT_IDLETIME, keyArg(key))
}

// ObjectRefCount returns the reference count of key's value.
//
//zipline:twins ObjectRefCount
func objectRefCountCmd(key string) command[int64] {
	return define(decInt, specOBJECT_REFCOUNT, keyArg(key))
}

// SortArgs are SORT's options. The zero SortArgs sorts the elements
// numerically, ascending, all of them.
type SortArgs struct {
	By     string   // sort by these keys' values ("weight_*"; "nosort" to keep the order)
	Offset int64    // with Count: a page of the result
	Count  int64    // 0: every element
	Get    []string // return these keys' values instead ("#" the element itself)
	Desc   bool     // descending
	Alpha  bool     // lexicographically
}

func (a *SortArgs) appendTo(args []arg) []arg {
	if a.By != "" {
		args = append(args, str("BY"), str(a.By))
	}
	if a.Offset != 0 || a.Count != 0 {
		args = append(args, str("LIMIT"), num(a.Offset), num(a.Count))
	}
	for _, g := range a.Get {
		args = append(args, str("GET"), str(g))
	}
	if a.Desc {
		args = append(args, str("DESC"))
	}
	if a.Alpha {
		args = append(args, str("ALPHA"))
	}
	return args
}

// Sort returns the elements of the list, set or sorted set at key, sorted
// (SORT); with Get, the values of the keys they name (nil for missing
// ones). On a cluster, By and Get must name keys of key's slot.
//
//zipline:twins Sort
func sortCmd(key string, a SortArgs) command[[][]byte] {
	return define(decBytesSlice, specSORT, a.appendTo([]arg{keyArg(key)})...)
}

// SortRO is Sort on a replica-safe, read-only command (SORT_RO).
//
//zipline:twins SortRO
func sortROCmd(key string, a SortArgs) command[[][]byte] {
	return define(decBytesSlice, specSORT_RO, a.appendTo([]arg{keyArg(key)})...)
}

// SortStore stores what Sort would return in the list dst, and returns
// its length.
//
//zipline:twins SortStore
func sortStoreCmd(key, dst string, a SortArgs) command[int64] {
	return define(decInt, specSORT, append(a.appendTo([]arg{keyArg(key)}), str("STORE"), keyArg(dst))...)
}

// Keys returns every key matching pattern (KEYS: it blocks the server
// while it walks the whole keyspace; prefer Scan). On a cluster it asks
// every primary.
//
//zipline:twins Keys
func keysCmd(pattern string) command[[]string] { return define(decStrings, specKEYS, str(pattern)) }

// decUnixSeconds and decUnixMillis read EXPIRETIME and PEXPIRETIME: -1 is
// no expiry (the zero time), -2 a missing key (Nil).
var (
	decUnixSeconds = newDecoder(tsInt, func(v resp.Value) (time.Time, error) { return unixTime(v, time.Second) })
	decUnixMillis  = newDecoder(tsInt, func(v resp.Value) (time.Time, error) { return unixTime(v, time.Millisecond) })
	decSeconds     = newDecoder(tsIntOrNull, func(v resp.Value) (time.Duration, error) {
		n, err := Value{v}.AsInt64()
		return time.Duration(n) * time.Second, err
	})
)

func unixTime(v resp.Value, unit time.Duration) (time.Time, error) {
	switch n := v.Int(); {
	case n == -2:
		return time.Time{}, Nil
	case n < 0:
		return time.Time{}, nil
	case unit == time.Second:
		return time.Unix(n, 0), nil
	default:
		return time.UnixMilli(n), nil
	}
}
