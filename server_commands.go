package zipline

import (
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// The server and connection commands. Each is defined once; go generate
// makes its Client and Batch methods (server_gen.go). On a cluster, those
// the servers say concern every shard or node (DBSIZE, FLUSHALL, CONFIG
// SET) go to each and their replies merge (policy.go); the others go to
// whichever node the cluster picks.

// Info returns the fields of INFO sections ("memory", "server", ...; none
// means the default set) as a map.
//
//zipline:twins Info
func infoCmd(sections ...string) command[map[string]string] {
	return define(decInfo, specINFO, strArgs(sections)...)
}

// ConfigGet returns the server configuration parameters matching pattern.
//
//zipline:twins ConfigGet
func configGetCmd(pattern string) command[map[string]string] {
	return define(decStringMap, specCONFIG_GET, str(pattern))
}

// ConfigSet sets a server configuration parameter; on a cluster or a
// Sentinel group, on every node the Client holds a connection to.
//
//zipline:twins ConfigSet client=error
func configSetCmd(parameter, value string) command[bool] {
	return define(decOK, specCONFIG_SET, str(parameter), str(value))
}

// ConfigResetStat resets the statistics INFO reports.
//
//zipline:twins ConfigResetStat client=error
func configResetStatCmd() command[bool] { return define(decOK, specCONFIG_RESETSTAT) }

// ConfigRewrite writes the running configuration to the server's
// configuration file.
//
//zipline:twins ConfigRewrite client=error
func configRewriteCmd() command[bool] { return define(decOK, specCONFIG_REWRITE) }

// DBSize returns the number of keys in the selected database; on a
// cluster, in every shard.
//
//zipline:twins DBSize
func dbSizeCmd() command[int64] { return define(decInt, specDBSIZE) }

// FlushDB deletes every key of the selected database; on a cluster, of
// every shard.
//
//zipline:twins FlushDB client=error
func flushDBCmd() command[bool] { return define(decOK, specFLUSHDB) }

// FlushDBAsync is FlushDB, the memory reclaimed in the background (ASYNC).
//
//zipline:twins FlushDBAsync client=error
func flushDBAsyncCmd() command[bool] { return define(decOK, specFLUSHDB, str("ASYNC")) }

// FlushAll deletes every key of every database; on a cluster, of every
// shard.
//
//zipline:twins FlushAll client=error
func flushAllCmd() command[bool] { return define(decOK, specFLUSHALL) }

// FlushAllAsync is FlushAll, the memory reclaimed in the background.
//
//zipline:twins FlushAllAsync client=error
func flushAllAsyncCmd() command[bool] { return define(decOK, specFLUSHALL, str("ASYNC")) }

// Time returns the server's clock.
//
//zipline:twins Time
func timeCmd() command[time.Time] { return define(decServerTime, specTIME) }

// LastSave returns when the server last saved its data to disk.
//
//zipline:twins LastSave
func lastSaveCmd() command[time.Time] { return define(decUnixTime, specLASTSAVE) }

// MemoryUsage returns how many bytes key and its value take in the
// server, or Nil if it does not exist. samples bounds how many elements of
// an aggregate are sampled (0: the server's default, 5; -1: all).
//
//zipline:twins MemoryUsage
func memoryUsageCmd(key string, samples int64) command[int64] {
	switch {
	case samples < 0:
		return define(decIntOrNil, specMEMORY_USAGE, keyArg(key), str("SAMPLES"), num(0))
	case samples > 0:
		return define(decIntOrNil, specMEMORY_USAGE, keyArg(key), str("SAMPLES"), num(samples))
	}
	return define(decIntOrNil, specMEMORY_USAGE, keyArg(key))
}

// SlowLog is one entry of the slow log.
type SlowLog struct {
	ID         int64
	Time       time.Time
	Duration   time.Duration
	Args       []string
	ClientAddr string
	ClientName string
}

// SlowLogGet returns up to n of the newest slow log entries (-1: all).
//
//zipline:twins SlowLogGet
func slowLogGetCmd(n int64) command[[]SlowLog] {
	return define(decSlowLogs, specSLOWLOG_GET, num(n))
}

// SlowLogLen returns how many entries the slow log holds.
//
//zipline:twins SlowLogLen
func slowLogLenCmd() command[int64] { return define(decInt, specSLOWLOG_LEN) }

// SlowLogReset empties the slow log.
//
//zipline:twins SlowLogReset client=error
func slowLogResetCmd() command[bool] { return define(decOK, specSLOWLOG_RESET) }

// Wait waits until the writes before it on its connection reached
// replicas replicas, or timeout passed (0: without limit), and returns how
// many replicas acknowledged them. On the shared connection "before it"
// means every caller's writes; it runs on a dedicated connection, so it
// sees that connection's own writes only: use it on a Client from
// Dedicated or Watch. On a cluster it asks every primary and returns the
// fewest.
//
//zipline:twins Wait
func waitCmd(replicas int64, timeout time.Duration) command[int64] {
	return defineBlocking(decInt, timeout, specWAIT, num(replicas), num(millis(timeout)))
}

// WaitAOF is Wait for the writes to reach the append-only file of
// numLocal (0 or 1) local and numReplicas replica servers (Redis 7.2,
// Valkey 8.0), and returns how many of each did.
//
//zipline:twins WaitAOF
func waitAOFCmd(numLocal, numReplicas int64, timeout time.Duration) command[[]int64] {
	return defineBlocking(decInts, timeout, specWAITAOF, num(numLocal), num(numReplicas), num(millis(timeout)))
}

// BgSave starts saving the data to disk in the background.
//
//zipline:twins BgSave
func bgSaveCmd() command[string] { return define(decStatus, specBGSAVE) }

// BgRewriteAOF starts rewriting the append-only file in the background.
//
//zipline:twins BgRewriteAOF
func bgRewriteAOFCmd() command[string] { return define(decStatus, specBGREWRITEAOF) }

// Save saves the data to disk, blocking the server meanwhile.
//
//zipline:twins Save client=error
func saveCmd() command[bool] { return define(decOK, specSAVE) }

// ReplicaOf makes the server a replica of host:port ("NO", "ONE" stops
// replicating).
//
//zipline:twins ReplicaOf client=error
func replicaOfCmd(host, port string) command[bool] {
	return define(decOK, specREPLICAOF, str(host), str(port))
}

// CommandCount returns how many commands the server has.
//
//zipline:twins CommandCount
func commandCountCmd() command[int64] { return define(decInt, specCOMMAND_COUNT) }

// CommandList returns the names of the server's commands.
//
//zipline:twins CommandList
func commandListCmd() command[[]string] { return define(decStrings, specCOMMAND_LIST) }

// CommandGetKeys returns which arguments of a command line are keys, as
// the server finds them.
//
//zipline:twins CommandGetKeys
func commandGetKeysCmd(args ...string) command[[]string] {
	return define(decStrings, specCOMMAND_GETKEYS, strArgs(args)...)
}

// LatencyLatest returns the latest latency spike of each event the server
// monitors (LATENCY LATEST), as [event, time, latest ms, max ms] tuples.
//
//zipline:twins LatencyLatest
func latencyLatestCmd() command[Value] { return define(decValue, specLATENCY_LATEST) }

// LatencyReset resets the latency statistics of events (none: all), and
// returns how many it reset.
//
//zipline:twins LatencyReset
func latencyResetCmd(events ...string) command[int64] {
	return define(decInt, specLATENCY_RESET, strArgs(events)...)
}

var (
	decUnixTime   = newDecoder(tsInt, func(v resp.Value) (time.Time, error) { return time.Unix(v.Int(), 0), nil })
	decServerTime = newDecoder(tsList, func(v resp.Value) (time.Time, error) {
		e := v.Elems()
		if len(e) != 2 {
			return time.Time{}, &TypeError{Want: "time.Time", Got: v.Type().String()}
		}
		sec, err := Value{e[0]}.AsInt64()
		if err != nil {
			return time.Time{}, err
		}
		usec, err := Value{e[1]}.AsInt64()
		return time.Unix(sec, usec*1000), err
	})
	decSlowLogs = newDecoder(tsList, func(v resp.Value) ([]SlowLog, error) {
		return each(v, func(e resp.Value) (SlowLog, error) {
			f := e.Elems()
			if len(f) < 4 {
				return SlowLog{}, &TypeError{Want: "SlowLog", Got: e.Type().String()}
			}
			l := SlowLog{ID: f[0].Int(), Time: time.Unix(f[1].Int(), 0), Duration: time.Duration(f[2].Int()) * time.Microsecond}
			l.Args, _ = Value{f[3]}.AsStrings()
			if len(f) >= 6 {
				l.ClientAddr, l.ClientName = string(f[4].Bytes()), string(f[5].Bytes())
			}
			return l, nil
		})
	})
	decStringIntMap = newDecoder(tsMap, func(v resp.Value) (map[string]int64, error) {
		elems, err := pairs(v, "map[string]int64")
		if err != nil {
			return nil, err
		}
		m := make(map[string]int64, len(elems)/2)
		for i := 0; i < len(elems); i += 2 {
			n, err := Value{elems[i+1]}.AsInt64()
			if err != nil {
				return nil, err
			}
			m[string(elems[i].Bytes())] = n
		}
		return m, nil
	})
)

// CommandInfo describes a command as COMMAND INFO does: what the server
// says of its arity, flags and where its keys are (the legacy first key,
// last key and step), and its ACL categories.
type CommandInfo struct {
	Name          string
	Arity         int64
	Flags         []string
	FirstKey      int64
	LastKey       int64
	StepCount     int64
	ACLCategories []string
}

// Command describes the server's commands (COMMAND), by name. zipline
// routes by its own copy of what Redis 7.0 and Valkey 9.1 say
// (internal/cmdspec), not by this.
//
//zipline:twins Command
func commandCmd() command[map[string]CommandInfo] { return define(decCommandInfos, specCOMMAND) }

// KeyFlags is a key of a command line with the key spec flags that apply
// to it ("RW", "access", "update"...).
type KeyFlags struct {
	Key   string
	Flags []string
}

// CommandGetKeysAndFlags returns which arguments of a command line are
// keys, with their flags, as the server finds them.
//
//zipline:twins CommandGetKeysAndFlags
func commandGetKeysAndFlagsCmd(args ...string) command[[]KeyFlags] {
	return define(decKeyFlags, specCOMMAND_GETKEYSANDFLAGS, strArgs(args)...)
}

// DebugObject returns DEBUG OBJECT's description of key (servers refuse
// DEBUG unless enable-debug-command allows it).
//
//zipline:twins DebugObject
func debugObjectCmd(key string) command[string] {
	return define(decString, specDEBUG, str("OBJECT"), keyArg(key))
}

// Migrate moves key to the server at host:port, database db, waiting up to
// timeout; it returns "OK", or "NOKEY" if key does not exist.
//
//zipline:twins Migrate
func migrateCmd(host, port, key string, db int, timeout time.Duration) command[string] {
	return define(decStatus, specMIGRATE, str(host), str(port), keyArg(key), num(int64(db)), num(millis(timeout)))
}

var (
	decCommandInfos = newDecoder(tsList, func(v resp.Value) (map[string]CommandInfo, error) {
		m := make(map[string]CommandInfo)
		for _, e := range v.Elems() {
			f := e.Elems()
			if len(f) < 6 {
				continue
			}
			ci := CommandInfo{Name: string(f[0].Bytes()), Arity: f[1].Int(), FirstKey: f[3].Int(), LastKey: f[4].Int(),
				StepCount: f[5].Int()}
			ci.Flags, _ = Value{f[2]}.AsStrings()
			if len(f) > 6 {
				ci.ACLCategories, _ = Value{f[6]}.AsStrings()
			}
			m[ci.Name] = ci
		}
		return m, nil
	})
	decKeyFlags = newDecoder(tsList, func(v resp.Value) ([]KeyFlags, error) {
		return each(v, func(e resp.Value) (KeyFlags, error) {
			f := e.Elems()
			if len(f) != 2 {
				return KeyFlags{}, &TypeError{Want: "KeyFlags", Got: e.Type().String()}
			}
			flags, err := Value{f[1]}.AsStrings()
			return KeyFlags{Key: string(f[0].Bytes()), Flags: flags}, err
		})
	})
)
