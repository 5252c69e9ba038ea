package harness

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// Environment describes the machine, the Go version, the server and the
// client modules linked in, as "key: value" lines for a report.
func Environment(server string) []string {
	env := []string{
		"date: " + time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		"machine: " + sysstat.Machine() + " (at start); client and server share these CPUs",
		"go: " + runtime.Version(),
	}
	if server != "" {
		env = append(env, "server: "+server)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		var mods []string
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/redis/rueidis", "github.com/redis/go-redis/v9", "github.com/gomodule/redigo",
				"github.com/joomcode/redispipe", "github.com/mediocregopher/radix/v4",
				"github.com/valkey-io/valkey-glide/go/v2":
				mods = append(mods, d.Path+" "+d.Version)
			case "github.com/ziplinekv/zipline":
				from := "../, this checkout"
				if d.Replace != nil && d.Replace.Path != "../" {
					from = "from " + d.Replace.Path // a revbuild snapshot of another revision
				}
				mods = append(mods, d.Path+" ("+from+")")
			}
		}
		if len(mods) > 0 {
			env = append(env, "modules: "+strings.Join(mods, ", "))
		}
	}
	return env
}

// CommandLine is how to run this program again, for a report: "cd bench
// && go run [-tags tags] ./cmd/<name>" and its arguments, shell-quoted.
func CommandLine(name, tags string) string {
	var b strings.Builder
	b.WriteString("cd bench && go run")
	if tags != "" {
		b.WriteString(" -tags " + tags)
	}
	b.WriteString(" ./cmd/" + name)
	for _, a := range os.Args[1:] {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ParseInts parses a comma-separated list of integers in [lo, hi], as the
// benchmarks' -conc flags take.
func ParseInts(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if n < lo || n > hi {
			return nil, fmt.Errorf("%d out of range [%d, %d]", n, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseNames picks out of all, in the order given, the items that a
// comma-separated list names (name gives an item's name), as the
// benchmarks' -clients flags take.
func ParseNames[T any](s string, all []T, name func(T) string) ([]T, error) {
	var out []T
	for _, want := range strings.Split(s, ",") {
		want = strings.TrimSpace(want)
		i := slices.IndexFunc(all, func(t T) bool { return name(t) == want })
		if i < 0 {
			return nil, fmt.Errorf("unknown %q (have %s)", want, JoinNames(all, name))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// JoinNames lists the items' names, comma-separated.
func JoinNames[T any](all []T, name func(T) string) string {
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = name(t)
	}
	return strings.Join(names, ",")
}

// QuickDefaults gives each flag in values that value unless the command
// line set it: what a -quick smoke-test flag means.
func QuickDefaults(values map[string]string) error {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, v := range values {
		if !set[name] {
			if err := flag.Set(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}
