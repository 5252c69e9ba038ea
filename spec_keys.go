package zipline

// This file finds the keys of a command that came without key marks (Do),
// for a cluster to route it: from its row's key specs, or the server's own
// COMMAND table (cluster.go loads it) for one the spec does not have.

import (
	"github.com/ziplinekv/zipline/internal/cmdspec"
)

// serverCommands is what the server says of its commands (COMMAND), for the
// commands the spec does not have (a module's, a newer server's): where
// their keys are, and whether they only read. With the spec it lets Do
// route any command on a cluster, and send reads to replicas.
type serverCommands cmdspec.Table

// info returns what is known of a command's keys and flags: its row's,
// or, for a command the spec does not have, the server's table's (nil if
// neither knows it). The arguments it reads its keys from follow the
// subcommand's name (see specArgs).
func (t serverCommands) info(spec *commandSpec, args []arg) *cmdspec.Command {
	if spec.info.Name != "" {
		return &spec.info
	}
	c := t[spec.name]
	if c != nil && c.Subcommands != nil && len(args) > 0 {
		c = cmdspec.Table(t).Lookup(spec.name, argList(args))
	}
	return c
}

// readOnly reports whether a replica may serve the command.
func (t serverCommands) readOnly(spec *commandSpec, args []arg) bool {
	if spec.info.Name != "" {
		return spec.readOnly()
	}
	c := t.info(spec, args)
	return c != nil && c.Has(cmdspec.ReadOnly)
}

// markKeys marks, among a command's arguments, those the server takes for
// keys, when the command came without key marks (Do): found from the
// command's key specs, as the server finds them. A command neither the
// spec nor the server's table knows is routed by its first argument.
func (t serverCommands) markKeys(spec *commandSpec, args []arg) {
	c := t.info(spec, args)
	if c == nil {
		if len(args) > 0 {
			args[0] = keyArg(args[0].text())
		}
		return
	}
	var buf [8]int
	if spec.sub == "" {
		for _, i := range c.AppendKeys(buf[:0], argList(args)) {
			args[i] = keyArg(args[i].text())
		}
		return
	}
	// Key specs count the subcommand's name, which args do not hold.
	for _, i := range c.AppendKeys(buf[:0], subArgs(spec.sub, args)) {
		if i > 0 {
			args[i-1] = keyArg(args[i-1].text())
		}
	}
}

// argList is a command's arguments as cmdspec reads them.
func argList(args []arg) cmdspec.Args {
	return cmdspec.Args{N: len(args), At: func(i int) string { return args[i].text() }}
}

// subArgs is a subcommand's arguments as cmdspec reads them: its name,
// then args.
func subArgs(sub string, args []arg) cmdspec.Args {
	return cmdspec.Args{N: 1 + len(args), At: func(i int) string {
		if i == 0 {
			return sub
		}
		return args[i-1].text()
	}}
}
