package zipline

// This file defines the connection commands (PING, ECHO, CLIENT ...,
// READONLY, READWRITE).

import (
	"time"
)

// Ping checks that the server answers; on a cluster, every primary.
//
//zipline:twins Ping client=error
func pingCmd() command[bool] { return define(decOK, specPING) }

// Echo returns msg, sent to the server and back.
//
//zipline:twins Echo
func echoCmd(msg string) command[string] { return define(decString, specECHO, str(msg)) }

// ClientID returns the ID of the connection the command runs on.
//
//zipline:twins ClientID
func clientIDCmd() command[int64] { return define(decInt, specCLIENT_ID) }

// ClientGetName returns the connection's name (Options.ClientName), or
// Nil if it has none.
//
//zipline:twins ClientGetName
func clientGetNameCmd() command[string] { return define(decString, specCLIENT_GETNAME) }

// ClientInfo describes the connection the command runs on, as CLIENT
// INFO's fields ("id", "addr", "name", "db", "resp", ...).
//
//zipline:twins ClientInfo
func clientInfoCmd() command[map[string]string] { return define(decClientInfo, specCLIENT_INFO) }

// ClientList describes every connection to the server, as CLIENT LIST's
// fields, one map per connection.
//
//zipline:twins ClientList
func clientListCmd() command[[]map[string]string] { return define(decClientList, specCLIENT_LIST) }

// ClientKill closes the connection from addr ("ip:port"), and returns how
// many it closed.
//
//zipline:twins ClientKill
func clientKillCmd(addr string) command[int64] {
	return define(decInt, specCLIENT_KILL, str("ADDR"), str(addr))
}

// ClientKillByFilter closes the connections matching CLIENT KILL's filters,
// given in the server's syntax ("ID", "12", "SKIPME", "yes", ...), and
// returns how many.
//
//zipline:twins ClientKillByFilter
func clientKillByFilterCmd(filters ...string) command[int64] {
	return define(decInt, specCLIENT_KILL, strArgs(filters)...)
}

// ClientPause stops the server answering clients for d (CLIENT PAUSE ...
// ALL).
//
//zipline:twins ClientPause client=error
func clientPauseCmd(d time.Duration) command[bool] {
	return define(decOK, specCLIENT_PAUSE, num(millis(d)))
}

// ClientUnpause ends a ClientPause.
//
//zipline:twins ClientUnpause client=error
func clientUnpauseCmd() command[bool] { return define(decOK, specCLIENT_UNPAUSE) }

// ClientUnblock unblocks the connection with that ID, blocked in a
// blocking command, and reports whether it was.
//
//zipline:twins ClientUnblock
func clientUnblockCmd(id int64) command[bool] { return define(decBool, specCLIENT_UNBLOCK, num(id)) }

// ClientUnblockWithError is ClientUnblock failing the blocked command
// with an UNBLOCKED error.
//
//zipline:twins ClientUnblockWithError
func clientUnblockWithErrorCmd(id int64) command[bool] {
	return define(decBool, specCLIENT_UNBLOCK, num(id), str("ERROR"))
}

// ReadOnly lets a cluster replica serve reads on this connection: a
// connection-state command, for a Client from Dedicated (zipline's cluster
// client sends it itself when Options.ReadFrom reads from replicas).
//
//zipline:twins ReadOnly client=error
func readOnlyCmd() command[bool] { return define(decOK, specREADONLY) }

// ReadWrite ends ReadOnly on this connection (a Client from Dedicated).
//
//zipline:twins ReadWrite client=error
func readWriteCmd() command[bool] { return define(decOK, specREADWRITE) }

// ClientTrackingArgs are CLIENT TRACKING's options.
type ClientTrackingArgs struct {
	Redirect int64 // the connection ID to send invalidations to; 0: this one
	Prefixes []string
	BCast    bool
	OptIn    bool
	OptOut   bool
	NoLoop   bool
}

// ClientTracking turns server-assisted client-side caching on or off on
// this connection: a connection-state command, for a Client from
// Dedicated. zipline's own cache (Options.ClientCache, Client.Cached) does
// this for you.
//
//zipline:twins ClientTracking client=error
func clientTrackingCmd(on bool, a ClientTrackingArgs) command[bool] {
	args := []arg{str("OFF")}
	if on {
		args[0] = str("ON")
	}
	if a.Redirect != 0 {
		args = append(args, str("REDIRECT"), num(a.Redirect))
	}
	for _, p := range a.Prefixes {
		args = append(args, str("PREFIX"), str(p))
	}
	for _, f := range []struct {
		on   bool
		word string
	}{{a.BCast, "BCAST"}, {a.OptIn, "OPTIN"}, {a.OptOut, "OPTOUT"}, {a.NoLoop, "NOLOOP"}} {
		if f.on {
			args = append(args, str(f.word))
		}
	}
	return define(decOK, specCLIENT_TRACKING, args...)
}
