package zipline

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is one ```go block of README.md.
type readmeBlock struct {
	line   int    // of its first line of code
	code   string // its code
	quoted string // the file it quotes (a "<!-- quoted from FILE -->" line before it), if any
}

// readmeBlocks returns README.md's Go blocks.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeBlock
	var cur *readmeBlock
	quote := regexp.MustCompile(`^<!-- quoted from (\S+) -->$`)
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		switch {
		case cur == nil && l == "```go":
			cur = &readmeBlock{line: i + 2}
			if i > 0 {
				if m := quote.FindStringSubmatch(lines[i-1]); m != nil {
					cur.quoted = m[1]
				}
			}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += l + "\n"
		}
	}
	return out
}

// The snippets' world: what they take as given.
const readmePrelude = `
var (
	ctx     = context.Background()
	c       *zipline.Client
	addr    = "127.0.0.1:6379"
	payload []byte
	bigJSON []byte
	keys    []string
	db      interface {
		LoadUser(ctx context.Context, id int) (User, error)
	}
)

type User struct{ Name string }

func resync()                {}
func handle(zipline.Message) {}

func withdraw(balance []byte, n int) []byte { return balance }

func transfer(w *zipline.Client) error { return nil }

var (
	_ = errors.Is
	_ = fmt.Println
	_ = http.Handle
	_ = os.Getenv
	_ = time.Second
	_ = cache.New[User]
	_ = codec.Zstd
	_ = fanout.New
	_ = layout.Dense
)
`

var readmeImports = []string{
	`"context"`, `"errors"`, `"fmt"`, `"net/http"`, `"os"`, `"time"`,
	`"github.com/ziplinekv/zipline"`, `"github.com/ziplinekv/zipline/cache"`, `"github.com/ziplinekv/zipline/codec"`,
	`"github.com/ziplinekv/zipline/fanout"`, `"github.com/ziplinekv/zipline/layout"`,
}

// readmeFile makes a snippet a Go file of package main: its import lines
// join the imports, and the rest is the body of a function returning an
// error, after which every variable it declares at its top level counts
// as used (a tour of an API names results it does not go on to use; the
// compiler still checks every call, type and argument).
func readmeFile(code string) (string, error) {
	imports := append([]string(nil), readmeImports...)
	var body []string
	for _, l := range strings.Split(code, "\n") {
		if rest, ok := strings.CutPrefix(l, "import "); ok {
			imports = append(imports, rest)
			continue
		}
		body = append(body, "\t"+l)
	}
	src := "package main\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n" + readmePrelude +
		"\nfunc main() {}\n\nfunc snippet() error {\n" + strings.Join(body, "\n") + "\n\treturn nil\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", src, 0)
	if err != nil {
		return "", err
	}
	var declared []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "snippet" {
			continue
		}
		for _, st := range fn.Body.List {
			if as, ok := st.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
				for _, e := range as.Lhs {
					if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
						declared = append(declared, id.Name)
					}
				}
			}
		}
	}
	var uses strings.Builder
	for _, name := range declared {
		fmt.Fprintf(&uses, "\t_ = %s\n", name)
	}
	return strings.Replace(src, "\treturn nil\n}\n", uses.String()+"\treturn nil\n}\n", 1), nil
}

// Every Go snippet in README.md builds against the code as it is: each is
// compiled as a program of its own, in a module that uses this one (and
// the otel module) through replace directives. A snippet that quotes the
// code itself must be found verbatim in the file it names.
func TestREADMESnippetsCompile(t *testing.T) {
	blocks := readmeBlocks(t)
	if len(blocks) < 10 {
		t.Fatalf("found %d Go blocks in README.md", len(blocks))
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module readmecheck\n\ngo 1.26.0\n\nrequire (\n" +
		"\tgithub.com/ziplinekv/zipline v0.0.0-00010101000000-000000000000\n" +
		"\tgithub.com/ziplinekv/zipline/otel v0.0.0-00010101000000-000000000000\n)\n\nreplace (\n" +
		"\tgithub.com/ziplinekv/zipline => " + root + "\n" +
		"\tgithub.com/ziplinekv/zipline/otel => " + filepath.Join(root, "otel") + "\n" +
		"\tgithub.com/ziplinekv/zipline/testbed => " + filepath.Join(root, "testbed") + "\n)\n"
	var sum bytes.Buffer
	for _, f := range []string{"go.sum", "otel/go.sum", "testbed/go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		sum.Write(b)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", gomod)
	write("go.sum", sum.String())
	where := map[string]int{} // package dir -> README line
	compiled := 0
	for i, b := range blocks {
		if b.quoted != "" {
			src, err := os.ReadFile(b.quoted)
			if err != nil {
				t.Errorf("README.md:%d quotes %s: %v", b.line, b.quoted, err)
			} else if !strings.Contains(string(src), b.code) {
				t.Errorf("README.md:%d quotes %s, which does not hold it any more:\n%s", b.line, b.quoted, b.code)
			}
			continue
		}
		src, err := readmeFile(b.code)
		if err != nil {
			t.Errorf("README.md:%d: the snippet does not parse: %v", b.line, err)
			continue
		}
		pkg := fmt.Sprintf("snippet%02d", i+1)
		where[pkg] = b.line
		write(filepath.Join(pkg, "main.go"), src)
		compiled++
	}
	cmd := exec.Command("go", "build", "-mod=mod", "-o", os.DevNull, "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := string(out)
		for pkg, line := range where {
			msg = strings.ReplaceAll(msg, pkg+"/main.go", fmt.Sprintf("README.md (the snippet at line %d), as main.go", line))
		}
		t.Fatalf("README snippets do not build: %v\n%s", err, msg)
	}
	t.Logf("%d README snippets build; %d quote the code and match it", compiled, len(blocks)-compiled)
}
