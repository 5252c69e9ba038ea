package zipline

// The ACL commands. Each is defined once; go generate makes its Client and
// Batch methods (commands_gen.go). On a cluster each goes to one node:
// users are per node, so change them on each (ACLs are not propagated).

// ACLWhoAmI returns the user the connection is authenticated as.
//
//zipline:twins ACLWhoAmI
func aclWhoAmICmd() command[string] { return define(decString, specACL_WHOAMI) }

// ACLUsers returns the names of the users.
//
//zipline:twins ACLUsers
func aclUsersCmd() command[[]string] { return define(decStrings, specACL_USERS) }

// ACLList returns every user's rules, as ACL SETUSER would take them.
//
//zipline:twins ACLList
func aclListCmd() command[[]string] { return define(decStrings, specACL_LIST) }

// ACLCat returns the command categories, or, given one, its commands.
//
//zipline:twins ACLCat
func aclCatCmd(category ...string) command[[]string] {
	return define(decStrings, specACL_CAT, strArgs(category)...)
}

// ACLSetUser creates or changes a user with rules ("on", ">password",
// "~key:*", "+@read"...).
//
//zipline:twins ACLSetUser client=error
func aclSetUserCmd(user string, rules ...string) command[bool] {
	return define(decOK, specACL_SETUSER, append([]arg{str(user)}, strArgs(rules)...)...)
}

// ACLDelUser deletes users and returns how many existed.
//
//zipline:twins ACLDelUser
func aclDelUserCmd(users ...string) command[int64] {
	return define(decInt, specACL_DELUSER, strArgs(users)...)
}

// ACLDryRun reports whether user may run a command line: "OK", or why
// not.
//
//zipline:twins ACLDryRun
func aclDryRunCmd(user string, command ...string) command[string] {
	return define(decString, specACL_DRYRUN, append([]arg{str(user)}, strArgs(command)...)...)
}

// ACLGenPass returns a random password of bits bits (0: 256), in hex.
//
//zipline:twins ACLGenPass
func aclGenPassCmd(bits int64) command[string] {
	if bits <= 0 {
		return define(decString, specACL_GENPASS)
	}
	return define(decString, specACL_GENPASS, num(bits))
}

// ACLLog returns up to count of the newest security events (denied
// commands, failed logins), each as its fields.
//
//zipline:twins ACLLog
func aclLogCmd(count int64) command[[]map[string]string] {
	return define(decFieldMaps, specACL_LOG, num(count))
}

// ACLLogReset empties the security event log.
//
//zipline:twins ACLLogReset client=error
func aclLogResetCmd() command[bool] { return define(decOK, specACL_LOG, str("RESET")) }
