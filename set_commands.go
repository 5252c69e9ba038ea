package zipline

import "strconv"

// The set commands. Each is defined once; go generate makes its Client and
// Batch methods (commands_gen.go).

// SAdd adds members to the set and returns how many were new.
//
//zipline:twins SAdd
func saddCmd(key string, members ...string) command[int64] {
	return define(decInt, specSADD, keyAnd(key, members)...)
}

// SRem removes members and returns how many were present.
//
//zipline:twins SRem
func sremCmd(key string, members ...string) command[int64] {
	return define(decInt, specSREM, keyAnd(key, members)...)
}

// SMembers returns every member of the set.
//
//zipline:twins SMembers
func smembersCmd(key string) command[[]string] { return define(decStrings, specSMEMBERS, keyArg(key)) }

// SIsMember reports whether member is in the set.
//
//zipline:twins SIsMember
func sisMemberCmd(key, member string) command[bool] {
	return define(decBool, specSISMEMBER, keyArg(key), str(member))
}

// SMIsMember reports, for each member, whether it is in the set.
//
//zipline:twins SMIsMember
func smisMemberCmd(key string, members ...string) command[[]bool] {
	return define(decBools, specSMISMEMBER, keyAnd(key, members)...)
}

// SCard returns the number of members.
//
//zipline:twins SCard
func scardCmd(key string) command[int64] { return define(decInt, specSCARD, keyArg(key)) }

// SPop removes and returns a random member, or Nil if the set is empty.
//
//zipline:twins SPop
func spopCmd(key string) command[string] { return define(decString, specSPOP, keyArg(key)) }

// SPopN removes and returns up to count random members.
//
//zipline:twins SPopN
func spopNCmd(key string, count int64) command[[]string] {
	return define(decStrings, specSPOP, keyArg(key), num(count))
}

// SRandMember returns a random member without removing it, or Nil if the
// set is empty.
//
//zipline:twins SRandMember
func srandMemberCmd(key string) command[string] {
	return define(decString, specSRANDMEMBER, keyArg(key))
}

// SRandMemberN returns up to count distinct random members; a negative
// count may repeat them and returns -count.
//
//zipline:twins SRandMemberN
func srandMemberNCmd(key string, count int64) command[[]string] {
	return define(decStrings, specSRANDMEMBER, keyArg(key), num(count))
}

// SMove moves member from the set src to dst, and reports whether it was
// in src.
//
//zipline:twins SMove
func smoveCmd(src, dst, member string) command[bool] {
	return define(decBool, specSMOVE, keyArg(src), keyArg(dst), str(member))
}

// SInter returns the members common to every set.
//
//zipline:twins SInter
func sinterCmd(keys ...string) command[[]string] {
	return define(decStrings, specSINTER, keyArgs(keys)...)
}

// SInterCard returns how many members the sets have in common, counting at
// most limit (0: no limit).
//
//zipline:twins SInterCard
func sinterCardCmd(limit int64, keys ...string) (command[int64], error) {
	args, err := numKeysLimit(keys, limit)
	return define(decInt, specSINTERCARD, args...), named(err, "SINTERCARD")
}

// SUnion returns the members of any of the sets.
//
//zipline:twins SUnion
func sunionCmd(keys ...string) command[[]string] {
	return define(decStrings, specSUNION, keyArgs(keys)...)
}

// SDiff returns the members of the first set that are in none of the
// others.
//
//zipline:twins SDiff
func sdiffCmd(keys ...string) command[[]string] {
	return define(decStrings, specSDIFF, keyArgs(keys)...)
}

// SInterStore stores SInter's result in dst and returns its size.
//
//zipline:twins SInterStore
func sinterStoreCmd(dst string, keys ...string) command[int64] {
	return define(decInt, specSINTERSTORE, keyAndKeys(dst, keys)...)
}

// SUnionStore stores SUnion's result in dst and returns its size.
//
//zipline:twins SUnionStore
func sunionStoreCmd(dst string, keys ...string) command[int64] {
	return define(decInt, specSUNIONSTORE, keyAndKeys(dst, keys)...)
}

// SDiffStore stores SDiff's result in dst and returns its size.
//
//zipline:twins SDiffStore
func sdiffStoreCmd(dst string, keys ...string) command[int64] {
	return define(decInt, specSDIFFSTORE, keyAndKeys(dst, keys)...)
}

// keyAndKeys is a key followed by keys.
func keyAndKeys(key string, keys []string) []arg {
	args := make([]arg, 0, 1+len(keys))
	args = append(args, keyArg(key))
	return append(args, keyArgs(keys)...)
}

// numKeysLimit is numkeys, the keys, then LIMIT limit if limit > 0.
func numKeysLimit(keys []string, limit int64) ([]arg, error) {
	if limit < 0 {
		return nil, &ArgumentError{Reason: "limit " + strconv.FormatInt(limit, 10) + " is negative (0: no limit)"}
	}
	args := make([]arg, 0, len(keys)+3)
	args = append(args, num(int64(len(keys))))
	args = append(args, keyArgs(keys)...)
	if limit > 0 {
		args = append(args, str("LIMIT"), num(limit))
	}
	return args, nil
}
