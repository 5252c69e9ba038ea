package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A command definition (a function returning command[T], or command[T] and
// an error) marked
//
//	//zipline:twins Name [buf=N] [client=error]
//
// in its doc comment gets two methods, generated: Client.Name, which runs
// it, and Batch.Name, which queues it (a Tx is a Batch). Their parameters
// are the definition's, after the context for the Client; their doc is
// the definition's. Options:
//
//   - buf=N: the definition's first parameter, buf []arg, is a buffer the
//     method keeps on its stack ([N]arg) for the arguments;
//   - client=error: the Client method returns only the error (SET, LSET),
//     the Batch future still holds the decoded reply;
//   - client=manual: the Client method is written by hand (it does more
//     than run the command: on a cluster, run it on every shard), only the
//     Batch method is generated.
//
// A definition that also returns an error is refused before anything is
// sent when the error is set (runChecked, enqueueChecked).
type twin struct {
	method    string
	def       *ast.FuncDecl
	doc       []string
	buf       int
	errOnly   bool
	manual    bool
	checked   bool
	result    string // T
	command   string // the command's name as sent, for the Batch doc
	params    []param
	variadic  bool
	file      string
	usesSpecs []string
}

type param struct{ name, typ string }

const directive = "//zipline:twins"

// twinsFiles writes, for each file of definitions in dir, <file>_gen.go
// with their twins, and commands_gen.go with the Commands interface.
func twinsFiles(dir string) (map[string][]byte, error) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	byFile := map[string][]*twin{}
	var handWritten []method // Client command methods written by hand
	seen := map[string]bool{}
	for _, path := range paths {
		base := filepath.Base(path)
		if strings.HasSuffix(base, "_test.go") || strings.HasSuffix(base, "_gen.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if m, ok := clientCommand(fset, fd); ok {
				handWritten = append(handWritten, m)
				continue
			}
			if fd.Doc == nil || fd.Recv != nil {
				continue
			}
			tw, err := parseTwin(fset, fd)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", fset.Position(fd.Pos()), fd.Name.Name, err)
			}
			if tw == nil {
				continue
			}
			if seen[tw.method] {
				return nil, fmt.Errorf("two definitions of %s", tw.method)
			}
			seen[tw.method] = true
			tw.file = base
			byFile[base] = append(byFile[base], tw)
		}
	}
	files := map[string][]byte{}
	methods := handWritten
	for base, twins := range byFile {
		sort.Slice(twins, func(i, j int) bool { return twins[i].method < twins[j].method })
		var body bytes.Buffer
		for _, tw := range twins {
			writeTwins(&body, fset, tw)
			if !tw.manual {
				methods = append(methods, tw.signature())
			}
		}
		name := strings.TrimSuffix(base, ".go") + "_gen.go"
		src, err := goFile(fmt.Sprintf("// The Client and Batch methods of the commands defined in %s.\n\n", base), body.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		files[name] = src
	}
	for _, m := range handWritten {
		if seen[m.name] && !isManualIn(byFile, m.name) {
			return nil, fmt.Errorf("Client.%s is written by hand and defined with %s", m.name, directive)
		}
	}
	var body bytes.Buffer
	writeInterface(&body, methods)
	src, err := goFile("", body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("commands_gen.go: %w", err)
	}
	files["commands_gen.go"] = src
	return files, nil
}

// goFile makes a formatted file of package zipline: the header, the
// imports body uses, a comment, then body.
func goFile(comment string, body []byte) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("package zipline\n\nimport (\n")
	for _, pkg := range []string{"context", "iter", "time"} {
		if regexp.MustCompile(`\b` + pkg + `\.[A-Z]`).Match(body) {
			fmt.Fprintf(&b, "\t%q\n", pkg)
		}
	}
	b.WriteString(")\n\n")
	b.WriteString(comment)
	b.Write(body)
	return format.Source(b.Bytes())
}

func isManualIn(byFile map[string][]*twin, name string) bool {
	for _, twins := range byFile {
		for _, tw := range twins {
			if tw.method == name {
				return tw.manual
			}
		}
	}
	return false
}

func parseTwin(fset *token.FileSet, fd *ast.FuncDecl) (*twin, error) {
	var tw *twin
	var doc []string
	for _, c := range fd.Doc.List {
		if rest, ok := strings.CutPrefix(c.Text, directive); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return nil, fmt.Errorf("%s without a method name", directive)
			}
			tw = &twin{method: fields[0], def: fd}
			for _, opt := range fields[1:] {
				k, v, _ := strings.Cut(opt, "=")
				switch k {
				case "buf":
					n, err := strconv.Atoi(v)
					if err != nil || n < 1 {
						return nil, fmt.Errorf("bad %s", opt)
					}
					tw.buf = n
				case "client":
					switch v {
					case "error":
						tw.errOnly = true
					case "manual":
						tw.manual = true
					default:
						return nil, fmt.Errorf("bad %s", opt)
					}
				default:
					return nil, fmt.Errorf("unknown option %s", opt)
				}
			}
			continue
		}
		doc = append(doc, c.Text)
	}
	if tw == nil {
		return nil, nil
	}
	for len(doc) > 0 && strings.TrimSpace(strings.TrimPrefix(doc[len(doc)-1], "//")) == "" {
		doc = doc[:len(doc)-1] // the blank line before the directive
	}
	if len(doc) == 0 || !strings.HasPrefix(doc[0], "// "+tw.method+" ") {
		return nil, fmt.Errorf("its doc comment must start with %q: it becomes Client.%s's", tw.method+" ", tw.method)
	}
	tw.doc = doc
	res := fd.Type.Results
	if res == nil || len(res.List) == 0 || len(res.List) > 2 {
		return nil, fmt.Errorf("a definition returns command[T] (and an error)")
	}
	idx, ok := res.List[0].Type.(*ast.IndexExpr)
	if !ok || exprString(fset, idx.X) != "command" {
		return nil, fmt.Errorf("a definition returns command[T], not %s", exprString(fset, res.List[0].Type))
	}
	tw.result = exprString(fset, idx.Index)
	tw.checked = len(res.List) == 2 || len(res.List[0].Names) > 1
	ps := fd.Type.Params.List
	for i, f := range ps {
		typ := exprString(fset, f.Type)
		if el, ok := f.Type.(*ast.Ellipsis); ok {
			if i != len(ps)-1 {
				return nil, fmt.Errorf("variadic parameter before the last")
			}
			tw.variadic = true
			typ = "..." + exprString(fset, el.Elt)
		}
		for _, n := range f.Names {
			tw.params = append(tw.params, param{n.Name, typ})
		}
	}
	if tw.buf > 0 {
		if len(tw.params) == 0 || tw.params[0].name != "buf" || tw.params[0].typ != "[]arg" {
			return nil, fmt.Errorf("buf=%d wants a first parameter buf []arg", tw.buf)
		}
	} else if len(tw.params) > 0 && tw.params[0].typ == "[]arg" {
		return nil, fmt.Errorf("a first parameter []arg wants buf=N")
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && strings.HasPrefix(id.Name, "spec") && id.Name != "spec" {
			tw.usesSpecs = append(tw.usesSpecs, id.Name)
		}
		return true
	})
	if len(tw.usesSpecs) > 0 {
		tw.command = commandOfIdent(tw.usesSpecs[0])
	}
	return tw, nil
}

// commandOfIdent names the command of a row identifier: specOBJECT_ENCODING
// is OBJECT ENCODING (names with a dash or dot keep an underscore: close
// enough for a doc comment).
func commandOfIdent(id string) string {
	return strings.ReplaceAll(strings.TrimPrefix(id, "spec"), "_", " ")
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, e)
	return b.String()
}

func writeTwins(b *bytes.Buffer, fset *token.FileSet, tw *twin) {
	params := tw.params
	if tw.buf > 0 {
		params = params[1:]
	}
	var decl, call []string
	for _, p := range params {
		decl = append(decl, p.name+" "+p.typ)
		if strings.HasPrefix(p.typ, "...") {
			call = append(call, p.name+"...")
		} else {
			call = append(call, p.name)
		}
	}
	if tw.buf > 0 {
		call = append([]string{"buf[:0]"}, call...)
	}
	def := tw.def.Name.Name + "(" + strings.Join(call, ", ") + ")"
	bufDecl := ""
	if tw.buf > 0 {
		bufDecl = fmt.Sprintf("\tvar buf [%d]arg\n", tw.buf)
	}
	if !tw.manual {
		writeClient(b, tw, def, bufDecl, decl)
	}
	writeBatch(b, tw, def, bufDecl, decl)
}

func writeClient(b *bytes.Buffer, tw *twin, def, bufDecl string, decl []string) {
	ctxDecl := strings.Join(append([]string{"ctx context.Context"}, decl...), ", ")
	for _, l := range tw.doc {
		b.WriteString(l + "\n")
	}
	switch {
	case tw.errOnly && tw.checked:
		fmt.Fprintf(b, "func (c *Client) %s(%s) error {\n%s", tw.method, ctxDecl, bufDecl)
		fmt.Fprintf(b, "\tcm, err := %s\n\tif err == nil {\n\t\t_, err = run(ctx, c, cm)\n\t}\n\treturn err\n}\n\n", def)
	case tw.errOnly:
		fmt.Fprintf(b, "func (c *Client) %s(%s) error {\n%s", tw.method, ctxDecl, bufDecl)
		fmt.Fprintf(b, "\t_, err := run(ctx, c, %s)\n\treturn err\n}\n\n", def)
	case tw.checked:
		fmt.Fprintf(b, "func (c *Client) %s(%s) (%s, error) {\n%s", tw.method, ctxDecl, tw.result, bufDecl)
		fmt.Fprintf(b, "\tcm, err := %s\n\treturn runChecked(ctx, c, cm, err)\n}\n\n", def)
	default:
		fmt.Fprintf(b, "func (c *Client) %s(%s) (%s, error) {\n%s", tw.method, ctxDecl, tw.result, bufDecl)
		fmt.Fprintf(b, "\treturn run(ctx, c, %s)\n}\n\n", def)
	}
}

func writeBatch(b *bytes.Buffer, tw *twin, def, bufDecl string, decl []string) {
	what := tw.command
	if what == "" {
		what = "the command"
	}
	fmt.Fprintf(b, "// %s queues %s; see Client.%s.\n", tw.method, what, tw.method)
	fmt.Fprintf(b, "func (b *Batch) %s(%s) *Future[%s] {\n%s", tw.method, strings.Join(decl, ", "), tw.result, bufDecl)
	if tw.checked {
		fmt.Fprintf(b, "\tcm, err := %s\n\treturn enqueueChecked(b, cm, err)\n}\n\n", def)
	} else {
		fmt.Fprintf(b, "\treturn enqueue(b, %s)\n}\n\n", def)
	}
}

// method is a Client command method's name and signature (without the
// receiver), for the Commands interface.
type method struct{ name, sig string }

// notCommands are Client methods that take a context but are not commands
// a fake would stand in for.
var notCommands = map[string]bool{"Watch": true, "Dedicated": true, "Subscribe": true, "PSubscribe": true,
	"SSubscribe": true, "RenewCredentials": true}

// clientCommand reports whether fd is a hand-written Client method that
// runs commands (its first parameter a context), and its signature.
func clientCommand(fset *token.FileSet, fd *ast.FuncDecl) (method, bool) {
	if fd.Recv == nil || len(fd.Recv.List) != 1 || exprString(fset, fd.Recv.List[0].Type) != "*Client" ||
		!fd.Name.IsExported() || notCommands[fd.Name.Name] {
		return method{}, false
	}
	ps := fd.Type.Params.List
	if len(ps) == 0 || exprString(fset, ps[0].Type) != "context.Context" {
		return method{}, false
	}
	sig := exprString(fset, fd.Type)
	return method{fd.Name.Name, strings.TrimPrefix(sig, "func")}, true
}

// signature is the generated Client method's, for the Commands interface.
func (tw *twin) signature() method {
	params := tw.params
	if tw.buf > 0 {
		params = params[1:]
	}
	decl := []string{"ctx context.Context"}
	for _, p := range params {
		decl = append(decl, p.name+" "+p.typ)
	}
	res := "(" + tw.result + ", error)"
	if tw.errOnly {
		res = "error"
	}
	return method{tw.method, "(" + strings.Join(decl, ", ") + ") " + res}
}

// writeInterface writes the Commands interface: every Client command
// method, generated or hand-written.
func writeInterface(b *bytes.Buffer, methods []method) {
	sort.Slice(methods, func(i, j int) bool { return methods[i].name < methods[j].name })
	b.WriteString(`// Commands is every command a Client runs (subscriptions aside): what the
// shared Client, a Client from Dedicated and the Client passed to a Watch
// callback all offer. Accept it instead of *Client where code only runs
// commands, so that tests can pass a fake (embed Commands in a struct and
// override the methods the test needs). It is generated, from the Client's
// command methods.
type Commands interface {
`)
	for _, m := range methods {
		fmt.Fprintf(b, "\t%s%s\n", m.name, m.sig)
	}
	b.WriteString("}\n\nvar _ Commands = (*Client)(nil)\n")
}
