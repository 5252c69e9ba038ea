// Command zipline is zipline's command-line tool.
//
//	zipline demo [flags]     the main job: implicit pipelining against a local server
//	                         (-cluster: on a local Redis Cluster; -failover: kill a primary midway)
//	zipline analyze [flags]  what layouts would save on a keyspace, and how to apply them
//	zipline migrate [flags]  move a namespace to a new key layout, live
//	zipline bench <suite>    benchmarks: layouts (the peers' comparisons run from bench/)
//	zipline fanout [flags]   a WebSocket hub relaying Redis pub/sub, with a demo page
//	zipline help [command]   a command's usage and flags
//	zipline version          the version of this binary
//
// Run "zipline help <command>" (or "zipline <command> -h") for a command's
// flags. Help goes to standard output with exit status 0; a command line
// zipline cannot run exits 2 with one line on standard error; a command that
// fails while it runs exits 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"
	"text/tabwriter"
)

// command is one of zipline's commands ("zipline demo"), or one under
// another ("zipline bench layouts").
type command struct {
	name     string
	summary  string // one line, in its parent's list of commands
	synopsis string // its arguments, as its usage line shows them after its name
	doc      string // what it does, printed by its help above its flags
	// flags defines the command's flags on fs and returns what runs the
	// command once fs has parsed them; args are the arguments it was given,
	// flags included, for a report that records its command line. What it
	// runs writes its results to the process's standard output and error.
	// nil for a command that only groups others (subs).
	flags func(fs *flag.FlagSet) func(ctx context.Context, args []string) error
	subs  []*command // the commands under it, e.g. bench's suites
	noun  string     // what its subs are called: "suite"
	// operands says the command takes arguments after its flags (inspect's
	// keys); its run reads them from fs.Args().
	operands bool
}

// commands are zipline's commands, in the order its usage lists them. help
// and version are the dispatcher's own (see run).
var commands = []*command{cmdDemo, cmdAnalyze, cmdMigrate, cmdDict, cmdInspect, cmdBench, cmdFanout}

var (
	cmdHelp = &command{name: "help", summary: "print a command's usage and flags",
		synopsis: "[command [suite]]",
		doc: `Prints zipline's usage, or a command's: what it does and its flags. "zipline <command> -h"
(or -help, --help) prints the same.`}
	cmdVersion = &command{name: "version", summary: "print the version of this binary",
		doc: `Prints zipline's module version, or "(devel)" and the VCS revision it was built from.
"zipline -version" (or --version) prints the same.`}
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line args (without the program's name) and returns
// the exit status: 0 for success and for help, which goes to stdout; 2 for
// a command line it cannot run, reported in one line on stderr; 1 for a
// command that failed while it ran.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zipline", flag.ContinueOnError)
	showVersion := fs.Bool("version", false, "print the version and exit")
	switch err := parseFlags(fs, args); {
	case errors.Is(err, flag.ErrHelp):
		mainUsage(stdout)
		return 0
	case err != nil:
		return fail(stderr, "", err)
	case *showVersion:
		fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
		return 0
	case fs.NArg() == 0:
		mainUsage(stderr)
		return 2
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	switch name {
	case "help":
		return help(rest, stdout, stderr)
	case "version":
		return version(rest, stdout, stderr)
	}
	c := find(commands, name)
	if c == nil {
		return fail(stderr, "", usagef("unknown command %s", quoteArg(name)))
	}
	return dispatch(ctx, c, c.name, rest, stdout, stderr)
}

// dispatch runs c, named path ("bench layouts"), on args: its flags, then
// either one of its subs or itself.
func dispatch(ctx context.Context, c *command, path string, args []string, stdout, stderr io.Writer) int {
	var err error
	if len(c.subs) == 0 {
		err = c.exec(ctx, path, args)
	} else {
		fs := flag.NewFlagSet("zipline "+path, flag.ContinueOnError)
		if err = parseFlags(fs, args); err == nil {
			if fs.NArg() == 0 {
				c.usage(stderr, path)
				return 2
			}
			sub := find(c.subs, fs.Arg(0))
			if sub != nil {
				return dispatch(ctx, sub, path+" "+sub.name, fs.Args()[1:], stdout, stderr)
			}
			err = usagef("unknown %s %s", c.noun, quoteArg(fs.Arg(0)))
		}
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		c.usage(stdout, path)
		return 0
	}
	return fail(stderr, path, err)
}

// exec parses args into c's flags and runs c, which has no subs. It
// returns flag.ErrHelp for -h, -help or --help, and a usageError for a
// command line c cannot run.
func (c *command) exec(ctx context.Context, path string, args []string) error {
	fs := flag.NewFlagSet("zipline "+path, flag.ContinueOnError)
	runCmd := c.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case asksHelp(fs.Args()):
		return flag.ErrHelp
	case fs.NArg() > 0 && !c.operands:
		return usagef("unexpected argument %s", quoteArg(fs.Arg(0)))
	}
	return runCmd(ctx, args)
}

// help is "zipline help [command [suite]]".
func help(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zipline help", flag.ContinueOnError)
	switch err := parseFlags(fs, args); {
	case errors.Is(err, flag.ErrHelp):
		cmdHelp.usage(stdout, "help")
		return 0
	case err != nil:
		return fail(stderr, "help", err)
	}
	var topic []string // "zipline help bench -h" is "zipline help bench"
	for _, a := range fs.Args() {
		if !asksHelp([]string{a}) {
			topic = append(topic, a)
		}
	}
	if len(topic) == 0 {
		mainUsage(stdout)
		return 0
	}
	list := append(commands[:len(commands):len(commands)], cmdHelp, cmdVersion)
	var c *command
	for i, name := range topic {
		if c = find(list, name); c == nil {
			return fail(stderr, "help", usagef("unknown command %s", quoteArg(strings.Join(topic[:i+1], " "))))
		}
		list = c.subs
	}
	c.usage(stdout, strings.Join(topic, " "))
	return 0
}

// version is "zipline version".
func version(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zipline version", flag.ContinueOnError)
	switch err := parseFlags(fs, args); {
	case errors.Is(err, flag.ErrHelp) || err == nil && asksHelp(fs.Args()):
		cmdVersion.usage(stdout, "version")
		return 0
	case err != nil:
		return fail(stderr, "version", err)
	case fs.NArg() > 0:
		return fail(stderr, "version", usagef("unexpected argument %s", quoteArg(fs.Arg(0))))
	}
	fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
	return 0
}

// versionLine describes the binary from its build information: its main
// module's version ("zipline v1.2.0", or a pseudo-version that names the
// revision), or, for "(devel)", the VCS revision it was built from:
// "zipline (devel) 0123abcd… (modified)".
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "zipline (unknown version: no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	line := "zipline " + v
	if v == "(devel)" {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				line += " " + s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				line += " (modified)"
			}
		}
	}
	if bi.GoVersion != "" {
		line += ", built with " + bi.GoVersion
	}
	return line
}

// mainUsage prints zipline's usage: its commands.
func mainUsage(w io.Writer) {
	fmt.Fprint(w, `usage: zipline <command> [flags]
       zipline help [command]
       zipline version

zipline is zipline's command-line tool: its demo, a live layout migration, benchmarks and a
WebSocket fanout hub.

commands:
`)
	listCommands(w, append(commands[:len(commands):len(commands)], cmdHelp, cmdVersion))
	fmt.Fprint(w, `
Run "zipline help <command>" (or "zipline <command> -h") for a command's flags.
`)
}

// usage prints c's usage, as "zipline help path" shows it: its synopsis,
// what it does, its subs and its flags.
func (c *command) usage(w io.Writer, path string) {
	fmt.Fprintln(w, strings.TrimSpace("usage: zipline "+path+" "+c.synopsis))
	if c.doc != "" {
		fmt.Fprintf(w, "\n%s\n", c.doc)
	}
	if len(c.subs) > 0 {
		fmt.Fprintf(w, "\n%ss:\n", c.noun)
		listCommands(w, c.subs)
		fmt.Fprintf(w, "\nRun \"zipline help %s <%s>\" (or \"zipline %s <%s> -h\") for a %s's flags.\n",
			path, c.noun, path, c.noun, c.noun)
	}
	if c.flags == nil {
		return
	}
	fs := flag.NewFlagSet("zipline "+path, flag.ContinueOnError)
	c.flags(fs)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func listCommands(w io.Writer, cs []*command) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cs {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
}

func find(cs []*command, name string) *command {
	for _, c := range cs {
		if c.name == name {
			return c
		}
	}
	return nil
}

// asksHelp reports whether args, what is left of a command line after
// its flags, hold -h, -help or --help: a request for help after an
// argument ("zipline demo extra -h") is still one.
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// usageError is a command line that cannot run: an unknown command or
// flag, a bad flag value, flags that exclude each other. zipline reports it
// in one line, with a pointer to the command's help, and exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError.
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// parseFlags parses args into fs without printing anything: for -h, -help
// or --help it returns flag.ErrHelp (the caller prints the usage to
// stdout, exit 0), and any other error as a usageError (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // the dispatcher prints usage and errors, each to its stream
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return flag.ErrHelp
	}
	return usageError{err}
}

// fail reports err, which ended "zipline path", on stderr in one line,
// and returns the exit status: 2 for a usageError, 1 for any other.
func fail(stderr io.Writer, path string, err error) int {
	msg := redactURLs(strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " "))
	var ue usageError
	if !errors.As(err, &ue) {
		fmt.Fprintf(stderr, "zipline: %s\n", msg)
		return 1
	}
	prefix, pointer := "zipline", "zipline help"
	if path != "" {
		prefix += " " + path
		if path != "help" {
			pointer += " " + path
		}
	}
	fmt.Fprintf(stderr, "%s: %s (run \"%s\" for usage)\n", prefix, msg, pointer)
	return 2
}

// quoteArg quotes a command-line argument for an error message, with a
// URL's password masked.
func quoteArg(s string) string { return redactURLs(fmt.Sprintf("%q", s)) }

var (
	// urlUserinfo matches a URL's user:password@.
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s"]*):[^/?#\s"]*@`)
	// urlPasswordOption matches a URL's password= option (a Sentinel
	// URL's data nodes' password).
	urlPasswordOption = regexp.MustCompile(`([?&]password=)[^&#\s"]*`)
)

// redactURLs masks the passwords of every URL in s: what zipline prints
// never carries one.
func redactURLs(s string) string {
	s = urlUserinfo.ReplaceAllString(s, "${1}:xxxxx@")
	return urlPasswordOption.ReplaceAllString(s, "${1}xxxxx")
}
