// Command fetch asks the servers the project installs (Redis 7.0 from
// Debian, Valkey 9.1) for COMMAND DOCS and COMMAND INFO, merges their
// answers into one row per command, and writes them as JSON: the input of
// go generate, which then needs no server. Run it with `make spec` when the
// servers change.
//
//	go run ./internal/cmdspec/fetch -out internal/cmdspec/servers.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/cmdspec"
	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	out := flag.String("out", "internal/cmdspec/servers.json", "where to write the spec")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var spec cmdspec.ServerSpec
	perServer := map[string]map[string]*cmdspec.Row{}
	for _, kind := range []testbed.Kind{testbed.Redis, testbed.Valkey} {
		rows, version, err := fetch(ctx, kind)
		if err != nil {
			log.Fatalf("fetch: %s: %v", kind, err)
		}
		spec.Servers = append(spec.Servers, cmdspec.Server{Name: string(kind), Version: version})
		perServer[string(kind)] = rows
	}
	spec.Commands = merge(perServer, spec.Servers)
	b, err := json.MarshalIndent(spec, "", "\t")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("fetch: %d commands from %v -> %s\n", len(spec.Commands), spec.Servers, *out)
}

// fetch starts a server of kind and reads its commands.
func fetch(ctx context.Context, kind testbed.Kind) (map[string]*cmdspec.Row, string, error) {
	srv, err := testbed.Start(testbed.Config{Kind: kind})
	if err != nil {
		return nil, "", err
	}
	defer srv.Stop()
	hello, err := cmdspec.Ask(ctx, srv.Addr, 2, "HELLO", "2")
	if err != nil {
		return nil, "", err
	}
	version := string(field(hello, "version").Bytes())
	info, err := cmdspec.Ask(ctx, srv.Addr, 2, "COMMAND", "INFO")
	if err != nil {
		return nil, "", err
	}
	if len(info.Elems()) == 0 {
		// Servers before 7.0 want names: COMMAND lists everything.
		if info, err = cmdspec.Ask(ctx, srv.Addr, 2, "COMMAND"); err != nil {
			return nil, "", err
		}
	}
	docs, err := cmdspec.Ask(ctx, srv.Addr, 2, "COMMAND", "DOCS")
	if err != nil {
		return nil, "", err
	}
	table, err := cmdspec.Parse(info)
	if err != nil {
		return nil, "", err
	}
	rows := map[string]*cmdspec.Row{}
	d := docs.Elems()
	docsByName := map[string]resp.Value{}
	for i := 0; i+1 < len(d); i += 2 {
		docsByName[strings.ToLower(string(d[i].Bytes()))] = d[i+1]
	}
	for _, c := range table {
		rows[c.Name] = row(c, docsByName, version)
	}
	return rows, version, nil
}

// row makes a command's row from what COMMAND INFO and COMMAND DOCS say.
func row(c *cmdspec.Command, docs map[string]resp.Value, version string) *cmdspec.Row {
	r := &cmdspec.Row{Name: c.Name, Arity: c.Arity, Flags: c.FlagNames, KeySpecs: c.KeySpecs,
		RequestPolicy: c.Request, ResponsePolicy: c.Response}
	if d, ok := docs[c.Name]; ok {
		r.Summary = string(field(d, "summary").Bytes())
		r.Group = string(field(d, "group").Bytes())
		r.Since = string(field(d, "since").Bytes())
		for _, f := range field(d, "doc_flags").Elems() {
			if string(f.Bytes()) == "deprecated" {
				r.Deprecated = true
			}
		}
		r.Arguments = arguments(field(d, "arguments"))
		subDocs := map[string]resp.Value{}
		sd := field(d, "subcommands").Elems()
		for i := 0; i+1 < len(sd); i += 2 {
			subDocs[strings.ToLower(string(sd[i].Bytes()))] = sd[i+1]
		}
		for _, name := range sortedKeys(c.Subcommands) {
			r.Subcommands = append(r.Subcommands, row(c.Subcommands[name], subDocs, version))
		}
	} else {
		for _, name := range sortedKeys(c.Subcommands) {
			r.Subcommands = append(r.Subcommands, row(c.Subcommands[name], nil, version))
		}
	}
	return r
}

func arguments(v resp.Value) []cmdspec.Argument {
	var out []cmdspec.Argument
	for _, a := range v.Elems() {
		arg := cmdspec.Argument{
			Name:  string(field(a, "name").Bytes()),
			Type:  string(field(a, "type").Bytes()),
			Token: string(field(a, "token").Bytes()),
			Since: string(field(a, "since").Bytes()),
		}
		for _, f := range field(a, "flags").Elems() {
			arg.Flags = append(arg.Flags, string(f.Bytes()))
		}
		arg.Arguments = arguments(field(a, "arguments"))
		out = append(out, arg)
	}
	return out
}

// merge makes one row per command: the newest server's description, with
// the servers that have it and when each added it.
func merge(perServer map[string]map[string]*cmdspec.Row, servers []cmdspec.Server) []*cmdspec.Row {
	names := map[string]bool{}
	for _, rows := range perServer {
		for n := range rows {
			names[n] = true
		}
	}
	var out []*cmdspec.Row
	for _, n := range sortedKeys(names) {
		var merged *cmdspec.Row
		since := map[string]string{}
		for _, s := range slices.Backward(servers) { // newest first: its description wins
			r := perServer[s.Name][n]
			if r == nil {
				continue
			}
			since[s.Name] = r.Since
			if merged == nil {
				merged = r
			} else if !reflect.DeepEqual(merged.KeySpecs, r.KeySpecs) {
				log.Printf("fetch: %s: key specs differ between servers; keeping %s's", n, servers[len(servers)-1].Name)
			}
		}
		merged.Servers = since
		merged.Since = ""
		for _, sub := range merged.Subcommands {
			subSince := map[string]string{}
			for _, s := range servers {
				if r := perServer[s.Name][n]; r != nil {
					for _, rs := range r.Subcommands {
						if rs.Name == sub.Name {
							subSince[s.Name] = rs.Since
						}
					}
				}
			}
			sub.Servers, sub.Since = subSince, ""
		}
		out = append(out, merged)
	}
	return out
}

// field reads a map (RESP3) or flat array of pairs (RESP2) by key.
func field(v resp.Value, key string) resp.Value {
	e := v.Elems()
	for i := 0; i+1 < len(e); i += 2 {
		if string(e[i].Bytes()) == key {
			return e[i+1]
		}
	}
	return resp.Value{}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
