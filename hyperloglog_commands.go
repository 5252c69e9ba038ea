package zipline

// The HyperLogLog commands. Each is defined once; go generate makes its
// Client and Batch methods (commands_gen.go).

// PFAdd adds elements to the HyperLogLog at key, and reports whether its
// estimate changed.
//
//zipline:twins PFAdd
func pfaddCmd(key string, elements ...string) command[bool] {
	return define(decBool, specPFADD, keyAnd(key, elements)...)
}

// PFCount returns the estimated number of distinct elements added to the
// HyperLogLogs at keys (their union).
//
//zipline:twins PFCount
func pfcountCmd(keys ...string) command[int64] { return define(decInt, specPFCOUNT, keyArgs(keys)...) }

// PFMerge stores in dst the union of the HyperLogLogs at keys.
//
//zipline:twins PFMerge client=error
func pfmergeCmd(dst string, keys ...string) command[bool] {
	return define(decOK, specPFMERGE, keyAndKeys(dst, keys)...)
}
