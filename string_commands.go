package zipline

// setArgs builds SET's arguments in buf, which callers keep on the stack.
func setArgs(buf []arg, key string, val []byte, cond string, exp []Expiry) ([]arg, error) {
	args := append(buf, keyArg(key), bin(val))
	if cond != "" {
		args = append(args, str(cond))
	}
	return appendExpiry(args, exp, "SET")
}

// pairArgs builds MSET's key, value pairs.
func pairArgs(pairs []KeyValue) []arg {
	args := make([]arg, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, keyArg(p.Key), bin(p.Value))
	}
	return args
}

// The string commands. Each is defined once, by its ...Cmd function;
// go generate makes the Client method that runs it and the Batch method
// that queues it (commands_gen.go), from the definition's parameters and
// doc comment. The SET and GETEX definitions return an *ArgumentError for
// expiries the server would refuse. It is not kept in the command: to
// escape analysis a command is one value, and an error in it would send
// its arguments to the heap along with the error.

// Get returns the value of key, or Nil if it does not exist.
//
//zipline:twins Get
func getCmd(key string) command[[]byte] { return define(decBytes, specGET, keyArg(key)) }

// Set stores value at key, replacing any value and, unless KeepTTL is
// given, any time to live. The Batch future holds true once stored.
//
//zipline:twins Set buf=8 client=error
func setCmd(buf []arg, key string, val []byte, exp ...Expiry) (command[bool], error) {
	args, err := setArgs(buf, key, val, "", exp)
	return define(decOK, specSET, args...), err
}

// SetNX stores value at key only if key does not exist (SET ... NX), and
// reports whether it did.
//
//zipline:twins SetNX buf=8
func setNXCmd(buf []arg, key string, val []byte, exp ...Expiry) (command[bool], error) {
	args, err := setArgs(buf, key, val, "NX", exp)
	return define(decSetCond, specSET, args...), err
}

// SetXX stores value at key only if key exists (SET ... XX), and reports
// whether it did.
//
//zipline:twins SetXX buf=8
func setXXCmd(buf []arg, key string, val []byte, exp ...Expiry) (command[bool], error) {
	args, err := setArgs(buf, key, val, "XX", exp)
	return define(decSetCond, specSET, args...), err
}

// SetGet stores value at key and returns the old value (SET ... GET), or
// Nil if there was none.
//
//zipline:twins SetGet buf=8
func setGetCmd(buf []arg, key string, val []byte, exp ...Expiry) (command[[]byte], error) {
	args, err := setArgs(buf, key, val, "GET", exp)
	return define(decBytes, specSET, args...), err
}

// GetSet is SetGet without options, with the legacy GETSET command.
//
//zipline:twins GetSet
func getSetCmd(key string, val []byte) command[[]byte] {
	return define(decBytes, specGETSET, keyArg(key), bin(val))
}

// MGet returns the values of keys, with nil for keys that do not exist.
//
//zipline:twins MGet
func mgetCmd(keys ...string) command[[][]byte] {
	return define(decBytesSlice, specMGET, keyArgs(keys)...)
}

// MSet stores several values at once, atomically. The Batch future holds
// true once stored.
//
//zipline:twins MSet client=error
func msetCmd(pairs ...KeyValue) command[bool] { return define(decOK, specMSET, pairArgs(pairs)...) }

// MSetNX stores several values only if none of the keys exists, and
// reports whether it did.
//
//zipline:twins MSetNX
func msetNXCmd(pairs ...KeyValue) command[bool] {
	return define(decBool, specMSETNX, pairArgs(pairs)...)
}

// GetEx returns the value of key and changes its expiry (Persist removes
// it).
//
//zipline:twins GetEx buf=4
func getExCmd(buf []arg, key string, exp ...Expiry) (command[[]byte], error) {
	args, err := appendExpiry(append(buf, keyArg(key)), exp, "GETEX")
	return define(decBytes, specGETEX, args...), err
}

// GetDel returns the value of key and deletes the key.
//
//zipline:twins GetDel
func getDelCmd(key string) command[[]byte] { return define(decBytes, specGETDEL, keyArg(key)) }

// Incr adds 1 to the integer at key and returns the result.
//
//zipline:twins Incr
func incrCmd(key string) command[int64] { return define(decInt, specINCR, keyArg(key)) }

// IncrBy adds n to the integer at key and returns the result.
//
//zipline:twins IncrBy
func incrByCmd(key string, n int64) command[int64] {
	return define(decInt, specINCRBY, keyArg(key), num(n))
}

// IncrByFloat adds f to the number at key and returns the result.
//
//zipline:twins IncrByFloat
func incrByFloatCmd(key string, f float64) command[float64] {
	return define(decFloat, specINCRBYFLOAT, keyArg(key), flt(f))
}

// Decr subtracts 1 from the integer at key and returns the result.
//
//zipline:twins Decr
func decrCmd(key string) command[int64] { return define(decInt, specDECR, keyArg(key)) }

// DecrBy subtracts n from the integer at key and returns the result.
//
//zipline:twins DecrBy
func decrByCmd(key string, n int64) command[int64] {
	return define(decInt, specDECRBY, keyArg(key), num(n))
}

// Append appends value to the string at key and returns its new length.
// It is refused while compression is on: appending to a compressed value
// would corrupt it.
//
//zipline:twins Append
func appendCmd(key string, val []byte) command[int64] {
	return define(decInt, specAPPEND, keyArg(key), bin(val))
}

// StrLen returns the length of the string at key (0 if missing). It is
// refused while compression is on: it would measure the stored bytes.
//
//zipline:twins StrLen
func strLenCmd(key string) command[int64] { return define(decInt, specSTRLEN, keyArg(key)) }

// GetRange returns the bytes of the string at key from start to end
// inclusive (negative: from the end). It is refused while compression is
// on: it would cut the stored bytes.
//
//zipline:twins GetRange
func getRangeCmd(key string, start, end int64) command[[]byte] {
	return define(decBytes, specGETRANGE, keyArg(key), num(start), num(end))
}

// SetRange overwrites the string at key from offset with val, and returns
// its new length. It is refused while compression is on.
//
//zipline:twins SetRange
func setRangeCmd(key string, offset int64, val []byte) command[int64] {
	return define(decInt, specSETRANGE, keyArg(key), num(offset), bin(val))
}

// LCS returns the longest common subsequence of the strings at two keys.
// It is refused while compression is on: it compares stored bytes.
//
//zipline:twins LCS
func lcsCmd(key1, key2 string) command[[]byte] {
	return define(decBytes, specLCS, keyArg(key1), keyArg(key2))
}

// LCSLen returns the length of the longest common subsequence.
//
//zipline:twins LCSLen
func lcsLenCmd(key1, key2 string) command[int64] {
	return define(decInt, specLCS, keyArg(key1), keyArg(key2), str("LEN"))
}

// SetIfEq stores value at key only if the key holds exactly equal,
// and reports whether it did (SET ... IFEQ: Valkey 8.1, Redis 8.4). It is
// refused while compression is on: the server compares stored bytes.
//
//zipline:twins SetIfEq buf=8
func setIfEqCmd(buf []arg, key string, val, equal []byte, exp ...Expiry) (command[bool], error) {
	args, err := appendExpiry(append(buf, keyArg(key), bin(val), str("IFEQ"), bin(equal)), exp, "SET")
	return define(decSetCond, specSET, args...), err
}

// DelIfEq deletes key only if it holds exactly equal, and reports whether
// it did (DELIFEQ: Valkey 9.0). It is refused while compression is on.
//
//zipline:twins DelIfEq
func delIfEqCmd(key string, equal []byte) command[bool] {
	return define(decBool, specDELIFEQ, keyArg(key), bin(equal))
}

// MSetEx stores several values, each with the expiry exp (MSETEX: Valkey
// 9.1), and reports whether it stored them.
//
//zipline:twins MSetEx buf=4
func msetExCmd(buf []arg, exp Expiry, pairs ...KeyValue) (command[bool], error) {
	args := append(buf, num(int64(len(pairs))))
	args = append(args, pairArgs(pairs)...)
	args, err := appendExpiry(args, []Expiry{exp}, "SET")
	return define(decBool, specMSETEX, args...), err
}

// SetIfEqGet is SetIfEq returning the value the key held (SET ... IFEQ
// ... GET), or Nil if it held none: it stored value only if that equals
// equal.
//
//zipline:twins SetIfEqGet buf=8
func setIfEqGetCmd(buf []arg, key string, val, equal []byte, exp ...Expiry) (command[[]byte], error) {
	args, err := appendExpiry(append(buf, keyArg(key), bin(val), str("IFEQ"), bin(equal), str("GET")), exp, "SET")
	return define(decBytes, specSET, args...), err
}
