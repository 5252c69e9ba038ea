package zipline

import "time"

func hsetArgs(key string, fields []FieldValue) []arg {
	args := make([]arg, 0, 1+2*len(fields))
	args = append(args, keyArg(key))
	for _, f := range fields {
		args = append(args, str(f.Field), bin(f.Value))
	}
	return args
}

// The hash commands. Each is defined once; go generate makes its Client
// and Batch methods (commands_gen.go).

// HSet sets fields of the hash at key and returns how many were new.
//
//zipline:twins HSet
func hsetCmd(key string, fields ...FieldValue) command[int64] {
	return define(decInt, specHSET, hsetArgs(key, fields)...)
}

// HSetNX sets field only if it does not exist, and reports whether it did.
//
//zipline:twins HSetNX
func hsetNXCmd(key, field string, val []byte) command[bool] {
	return define(decBool, specHSETNX, keyArg(key), str(field), bin(val))
}

// HGet returns the value of field, or Nil if the field or hash is missing.
//
//zipline:twins HGet
func hgetCmd(key, field string) command[[]byte] {
	return define(decBytes, specHGET, keyArg(key), str(field))
}

// HMGet returns the values of fields, with nil for missing ones.
//
//zipline:twins HMGet
func hmgetCmd(key string, fields ...string) command[[][]byte] {
	return define(decBytesSlice, specHMGET, keyAnd(key, fields)...)
}

// HGetAll returns every field and value of the hash (empty if missing);
// FieldMap.Scan fills a struct from them.
//
//zipline:twins HGetAll
func hgetAllCmd(key string) command[FieldMap] {
	return define(decFieldMap, specHGETALL, keyArg(key))
}

// HDel deletes fields and returns how many existed.
//
//zipline:twins HDel
func hdelCmd(key string, fields ...string) command[int64] {
	return define(decInt, specHDEL, keyAnd(key, fields)...)
}

// HExists reports whether field exists in the hash.
//
//zipline:twins HExists
func hexistsCmd(key, field string) command[bool] {
	return define(decBool, specHEXISTS, keyArg(key), str(field))
}

// HIncrBy adds n to the integer in field and returns the result.
//
//zipline:twins HIncrBy
func hincrByCmd(key, field string, n int64) command[int64] {
	return define(decInt, specHINCRBY, keyArg(key), str(field), num(n))
}

// HIncrByFloat adds f to the number in field and returns the result.
//
//zipline:twins HIncrByFloat
func hincrByFloatCmd(key, field string, f float64) command[float64] {
	return define(decFloat, specHINCRBYFLOAT, keyArg(key), str(field), flt(f))
}

// HKeys returns the hash's field names.
//
//zipline:twins HKeys
func hkeysCmd(key string) command[[]string] { return define(decStrings, specHKEYS, keyArg(key)) }

// HVals returns the hash's values.
//
//zipline:twins HVals
func hvalsCmd(key string) command[[][]byte] { return define(decBytesSlice, specHVALS, keyArg(key)) }

// HLen returns the number of fields in the hash.
//
//zipline:twins HLen
func hlenCmd(key string) command[int64] { return define(decInt, specHLEN, keyArg(key)) }

// HStrLen returns the length of field's value (0 if missing). It is
// refused while hashes are compressed: it would measure the stored bytes.
//
//zipline:twins HStrLen
func hstrLenCmd(key, field string) command[int64] {
	return define(decInt, specHSTRLEN, keyArg(key), str(field))
}

// HRandField returns up to count distinct random field names (HRANDFIELD
// key count); a negative count may repeat them and returns -count.
//
//zipline:twins HRandField
func hrandFieldCmd(key string, count int64) command[[]string] {
	return define(decStrings, specHRANDFIELD, keyArg(key), num(count))
}

// HRandFieldWithValues is HRandField with each field's value.
//
//zipline:twins HRandFieldWithValues
func hrandFieldWithValuesCmd(key string, count int64) command[[]FieldValue] {
	return define(decFieldValues, specHRANDFIELD, keyArg(key), num(count), str("WITHVALUES"))
}

// Hash field expiration: Redis 7.4 and Valkey 9.0. On an older server the
// client refuses these commands, naming the versions that have them.

// HExpire sets the time to live of fields, and returns per field: 1 set,
// 0 refused by cond, 2 deleted (d not positive), -2 no such field. d is
// sent in seconds (HEXPIRE), or milliseconds (HPEXPIRE) when finer.
//
//zipline:twins HExpire buf=8
func hexpireCmd(buf []arg, key string, d time.Duration, cond ExpireCond, fields ...string) command[[]int64] {
	spec, n := specHEXPIRE, int64(d/time.Second)
	if d%time.Second != 0 {
		spec, n = specHPEXPIRE, millis(d)
	}
	return define(decInts, spec, fieldsArgs(append(buf, keyArg(key), num(n)), cond, fields)...)
}

// HPExpire is HExpire in milliseconds (HPEXPIRE), whatever d.
//
//zipline:twins HPExpire buf=8
func hpexpireCmd(buf []arg, key string, d time.Duration, cond ExpireCond, fields ...string) command[[]int64] {
	return define(decInts, specHPEXPIRE, fieldsArgs(append(buf, keyArg(key), num(millis(d))), cond, fields)...)
}

// HExpireAt expires fields at t (HPEXPIREAT), and returns per field what
// HExpire does.
//
//zipline:twins HExpireAt buf=8
func hexpireAtCmd(buf []arg, key string, t time.Time, cond ExpireCond, fields ...string) command[[]int64] {
	return define(decInts, specHPEXPIREAT, fieldsArgs(append(buf, keyArg(key), num(t.UnixMilli())), cond, fields)...)
}

// HTTL returns the time to live of fields, in whole seconds: NoExpiry for
// a field without one, NoKey for a missing field.
//
//zipline:twins HTTL buf=4
func httlCmd(buf []arg, key string, fields ...string) command[[]time.Duration] {
	return define(decTTLs, specHTTL, fieldsArgs(append(buf, keyArg(key)), "", fields)...)
}

// HPTTL is HTTL in milliseconds.
//
//zipline:twins HPTTL buf=4
func hpttlCmd(buf []arg, key string, fields ...string) command[[]time.Duration] {
	return define(decPTTLs, specHPTTL, fieldsArgs(append(buf, keyArg(key)), "", fields)...)
}

// HExpireTime returns when fields expire, in Unix milliseconds
// (HPEXPIRETIME): -1 for a field without an expiry, -2 for a missing one.
//
//zipline:twins HExpireTime buf=4
func hexpireTimeCmd(buf []arg, key string, fields ...string) command[[]int64] {
	return define(decInts, specHPEXPIRETIME, fieldsArgs(append(buf, keyArg(key)), "", fields)...)
}

// HPersist removes the time to live of fields, and returns per field: 1
// removed, -1 had none, -2 no such field.
//
//zipline:twins HPersist buf=4
func hpersistCmd(buf []arg, key string, fields ...string) command[[]int64] {
	return define(decInts, specHPERSIST, fieldsArgs(append(buf, keyArg(key)), "", fields)...)
}

// HGetEx returns the values of fields (nil for missing ones) and sets
// their time to live (exp: EX, PX, ExpireAt or Persist; the zero Expiry
// leaves it).
//
//zipline:twins HGetEx buf=6
func hgetExCmd(buf []arg, key string, exp Expiry, fields ...string) (command[[][]byte], error) {
	args, err := appendExpiry(append(buf, keyArg(key)), []Expiry{exp}, "HGETEX")
	return define(decBytesSlice, specHGETEX, fieldsArgs(args, "", fields)...), err
}

// HSetEx sets fields with a time to live (exp: EX, PX, ExpireAt or
// KeepTTL; the zero Expiry sets none), and reports whether it set them.
//
//zipline:twins HSetEx buf=6
func hsetExCmd(buf []arg, key string, exp Expiry, fields ...FieldValue) (command[bool], error) {
	args, err := appendExpiry(append(buf, keyArg(key)), []Expiry{exp}, "HSETEX")
	args = append(args, str("FIELDS"), num(int64(len(fields))))
	for _, f := range fields {
		args = append(args, str(f.Field), bin(f.Value))
	}
	return define(decBool, specHSETEX, args...), err
}

// HGetDel returns the values of fields (nil for missing ones) and deletes
// them.
//
//zipline:twins HGetDel buf=4
func hgetDelCmd(buf []arg, key string, fields ...string) command[[][]byte] {
	return define(decBytesSlice, specHGETDEL, fieldsArgs(append(buf, keyArg(key)), "", fields)...)
}

// fieldsArgs appends an expiry condition, if any, then FIELDS, the number
// of fields and the fields (the hash field expiration commands' tail).
func fieldsArgs(args []arg, cond ExpireCond, fields []string) []arg {
	if cond != "" {
		args = append(args, str(string(cond)))
	}
	args = append(args, str("FIELDS"), num(int64(len(fields))))
	for _, f := range fields {
		args = append(args, str(f))
	}
	return args
}
