package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// exportedAPI returns the exported API of the packages of the module in
// dir that another module can import (not internal, not main), one feature
// per line, sorted, in the form of the Go project's api/ files:
//
//	pkg github.com/ziplinekv/zipline, func New(Options) (*Client, error)
//	pkg github.com/ziplinekv/zipline, method (*Client) Get(context.Context, string) ([]byte, error)
//	pkg github.com/ziplinekv/zipline, type Options struct, Addr string
//
// Parameter names are left out: renaming one breaks no caller. The types
// come from the compiler's export data (go list -export), so what is
// listed is what a caller compiles against.
func exportedAPI(ctx context.Context, dir string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-export", "-deps",
		"-json=ImportPath,Name,Export,Module,Error,DepOnly", "./...")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list in %s: %w\n%s", dir, err, strings.TrimSpace(stderr.String()))
	}
	type listed struct {
		ImportPath, Name, Export string
		Module                   *struct{ Path string }
		Error                    *struct{ Err string }
		DepOnly                  bool
	}
	exports := map[string]string{}
	var targets []listed
	dec := json.NewDecoder(&stdout)
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Error != nil {
			return nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.Name != "main" && !isInternal(p.ImportPath) {
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var lines []string
	for _, t := range targets {
		pkg, err := imp.Import(t.ImportPath)
		if err != nil {
			return nil, err
		}
		lines = append(lines, packageAPI(pkg)...)
	}
	sort.Strings(lines)
	return lines, nil
}

func isInternal(path string) bool {
	return strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
}

// packageAPI lists pkg's exported features.
func packageAPI(pkg *types.Package) []string {
	w := apiWriter{pkg: pkg}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			w.add("const %s %s = %s", name, w.typ(o.Type()), o.Val().ExactString())
		case *types.Var:
			w.add("var %s %s", name, w.typ(o.Type()))
		case *types.Func:
			sig := o.Type().(*types.Signature)
			w.add("func %s%s%s", name, w.typeParams(sig.TypeParams()), w.signature(sig))
		case *types.TypeName:
			w.typeName(o)
		}
	}
	return w.lines
}

type apiWriter struct {
	pkg   *types.Package
	lines []string
}

func (w *apiWriter) add(format string, a ...any) {
	w.lines = append(w.lines, "pkg "+w.pkg.Path()+", "+fmt.Sprintf(format, a...))
}

// typ spells t with this package's names unqualified and others' by path.
func (w *apiWriter) typ(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == w.pkg {
			return ""
		}
		return p.Path()
	})
}

// signature spells sig without parameter names: "(context.Context, string) error".
func (w *apiWriter) signature(sig *types.Signature) string {
	unnamed := func(t *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, t.Len())
		for i := range vars {
			vars[i] = types.NewParam(token.NoPos, nil, "", t.At(i).Type())
		}
		return types.NewTuple(vars...)
	}
	plain := types.NewSignatureType(nil, nil, nil, unnamed(sig.Params()), unnamed(sig.Results()), sig.Variadic())
	return strings.TrimPrefix(w.typ(plain), "func")
}

func (w *apiWriter) typeParams(tps *types.TypeParamList) string {
	if tps == nil || tps.Len() == 0 {
		return ""
	}
	parts := make([]string, tps.Len())
	for i := range parts {
		tp := tps.At(i)
		parts[i] = tp.Obj().Name() + " " + w.typ(tp.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (w *apiWriter) typeName(o *types.TypeName) {
	name := o.Name()
	if o.IsAlias() {
		w.add("type %s = %s", name, w.typ(o.Type()))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		return
	}
	decl := name + w.typeParams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.add("type %s struct", decl)
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			switch {
			case !f.Exported():
			case f.Embedded():
				w.add("type %s struct, embedded %s", decl, w.typ(f.Type()))
			default:
				w.add("type %s struct, %s %s", decl, f.Name(), w.typ(f.Type()))
			}
		}
	case *types.Interface:
		w.add("type %s interface", decl)
		for i := 0; i < u.NumMethods(); i++ {
			m := u.Method(i)
			if !m.Exported() {
				w.add("type %s interface, unexported methods", decl)
				continue
			}
			w.add("type %s interface, %s%s", decl, m.Name(), w.signature(m.Type().(*types.Signature)))
		}
		for i := 0; i < u.NumEmbeddeds(); i++ {
			if _, isIface := u.EmbeddedType(i).Underlying().(*types.Interface); !isIface {
				w.add("type %s interface, %s", decl, w.typ(u.EmbeddedType(i))) // a constraint's terms
			}
		}
		return
	default:
		w.add("type %s %s", decl, w.typ(u))
	}
	recvName := name
	if tps := named.TypeParams(); tps != nil && tps.Len() > 0 {
		args := make([]string, tps.Len())
		for i := range args {
			args[i] = tps.At(i).Obj().Name()
		}
		recvName += "[" + strings.Join(args, ", ") + "]"
	}
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i).Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := "(" + recvName + ")"
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "(*" + recvName + ")"
		}
		w.add("method %s %s%s", recv, m.Name(), w.signature(sig))
	}
}

// apiFile is where the baseline of m's exported API is kept.
func apiFile(repo string, m module) string {
	name := "zipline"
	if m.Rel != "" {
		name = strings.ReplaceAll(m.Rel, "/", "_")
	}
	return filepath.Join(repo, "api", name+".txt")
}

// hasGoAPI says whether m's exported Go API is promised to its users.
// cmd/zipline's packages serve its command line and the bench module, and
// its interface is the command line: its Go packages carry no promise.
func hasGoAPI(m module) bool {
	return m.Published && !strings.HasPrefix(m.Rel, "cmd/")
}

// checkAPI compares each published module's exported API with its
// baseline in api/. A feature added or changed fails until the baseline is
// rewritten (write); one removed, or changed (its old line goes), fails
// too, and write refuses to drop it from the baseline until CHANGELOG.md's
// Unreleased section names it in backquotes (`Client.Get`), so that a
// removal is never silent. It reports every difference it finds.
func checkAPI(ctx context.Context, repo string, mods []module, write bool, out io.Writer) error {
	changelog, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		return err
	}
	named := unreleasedNames(changelog)
	failed := false
	for _, m := range mods {
		if !hasGoAPI(m) {
			continue
		}
		now, err := exportedAPI(ctx, m.Dir)
		if err != nil {
			return err
		}
		file := apiFile(repo, m)
		var base []string
		if data, err := os.ReadFile(file); err == nil {
			base = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		added, removed := difference(now, base), difference(base, now)
		rel, _ := filepath.Rel(repo, file)
		var unnamed []string
		for _, line := range removed {
			if !named[featureName(line)] {
				unnamed = append(unnamed, line)
			}
		}
		switch {
		case len(added) == 0 && len(removed) == 0:
			continue
		case write && len(unnamed) == 0:
			data := strings.Join(now, "\n") + "\n"
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(out, "%s: %d added, %d removed\n", rel, len(added), len(removed))
			continue
		}
		failed = true
		for _, line := range removed {
			fmt.Fprintf(out, "%s: removed or changed: %s\n", rel, line)
		}
		for _, line := range added {
			fmt.Fprintf(out, "%s: new: %s\n", rel, line)
		}
		for _, line := range unnamed {
			fmt.Fprintf(out, "%s: CHANGELOG.md's %q section does not name `%s`, which goes: a removal or a signature change breaks its users\n",
				rel, unreleasedHeading, featureName(line))
		}
	}
	if failed {
		if write {
			return errors.New("the exported API drops features the changelog does not name")
		}
		return errors.New("the exported API differs from api/: if that is intended, say so in CHANGELOG.md and run make api")
	}
	return nil
}

// difference is the lines of a that b lacks, in a's order.
func difference(a, b []string) []string {
	in := map[string]bool{}
	for _, l := range b {
		in[l] = true
	}
	var out []string
	for _, l := range a {
		if !in[l] && l != "" {
			out = append(out, l)
		}
	}
	return out
}

// featureName is the name a changelog gives the feature of an API line:
// "Client.Get" for a method, "Options.Addr" for a field, "New" for a
// function, "Commands.Get" for an interface's method.
func featureName(line string) string {
	_, rest, _ := strings.Cut(line, ", ")
	kind, rest, _ := strings.Cut(rest, " ")
	ident := func(s string) string {
		end := strings.IndexAny(s, " ([=")
		if end < 0 {
			return s
		}
		return s[:end]
	}
	switch kind {
	case "method": // method (*Client) Get(...)
		recv, rest, _ := strings.Cut(rest, " ")
		recv = strings.Trim(recv, "()*")
		recv, _, _ = strings.Cut(recv, "[")
		return recv + "." + ident(rest)
	case "type": // type Options struct, Addr string
		typ := ident(rest)
		if _, member, ok := strings.Cut(rest, ", "); ok && !strings.HasPrefix(member, "embedded ") && member != "unexported methods" {
			return typ + "." + ident(member)
		}
		return typ
	}
	return ident(rest)
}

// unreleasedNames are the names CHANGELOG.md's Unreleased section gives in
// backquotes, with a package qualifier and a call's parentheses left out:
// `zipline.Client.Get()` names Client.Get.
func unreleasedNames(changelog []byte) map[string]bool {
	s := string(changelog)
	i := strings.Index(s, "\n"+unreleasedHeading+"\n")
	if i < 0 {
		return nil
	}
	s = s[i+len(unreleasedHeading)+2:]
	if next := strings.Index(s, "\n## "); next >= 0 {
		s = s[:next]
	}
	names := map[string]bool{}
	spans := strings.Split(s, "`")
	for j := 1; j < len(spans); j += 2 {
		name, _, _ := strings.Cut(spans[j], "(")
		names[name] = true
		for k := 0; k < len(name); k++ { // and without each qualifier
			if name[k] == '.' {
				names[name[k+1:]] = true
			}
		}
	}
	return names
}
