package main

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsumerOfARelease is what a new user of a release does, with every
// published module of the checkout served by a local file proxy at a
// version, as a registry serves a release's tags: in a fresh module, go
// get the library and the otel module, go mod tidy, go build, go vet; go
// install the CLI at that version and run its --version. A replace
// directive in a published go.mod, a requirement no registry can serve, or
// a CLI that cannot be installed fails it.
func TestConsumerOfARelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the library, the otel module and the CLI in a fresh module")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	repo := repoRoot(t)
	mods, err := loadModules(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	const version = "v0.99.0" // newer than any release, so that no requirement is met by accident
	work := t.TempDir()
	proxy := filepath.Join(work, "proxy")
	if err := writeProxy(ctx, repo, mods, version, proxy); err != nil {
		t.Fatal(err)
	}
	if err := checkConsumer(ctx, proxy, version, work); err != nil {
		t.Fatal(err)
	}
}

// TestPublishedModules checks what the release and the proxy see of the
// repository: the published modules in the order they are tagged, each
// requiring its siblings by version and never by a replace directive, and
// module zips that hold a module's own files only.
func TestPublishedModules(t *testing.T) {
	ctx := context.Background()
	repo := repoRoot(t)
	mods, err := loadModules(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range mods {
		if m.Published {
			order = append(order, m.tag("v1.2.3"))
		}
		data, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "replace" {
				t.Errorf("%s/go.mod has a replace directive (%q): consumers never see it, and go install pkg@version refuses it; use go.work", m.Rel, line)
			}
		}
		for p, v := range m.Requires {
			if strings.HasPrefix(v, "v0.0.0-") {
				t.Errorf("%s requires %s at the pseudo-version %s, which no release tags", m.Path, p, v)
			}
		}
	}
	want := "testbed/v1.2.3 v1.2.3 cmd/zipline/v1.2.3 otel/v1.2.3"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("tags in the order a release makes them: %s, want %s", got, want)
	}
	// go.work is what a release writes for the version the modules require
	// of each other, so that it never drifts from them.
	required := map[string]bool{}
	for _, m := range mods {
		for _, v := range m.Requires {
			required[v] = true
		}
	}
	if len(required) != 1 {
		t.Fatalf("the modules require each other at several versions: %v", required)
	}
	modJSON, err := goCmd(ctx, repo, "mod", "edit", "-json")
	if err != nil {
		t.Fatal(err)
	}
	for v := range required {
		work, err := os.ReadFile(filepath.Join(repo, "go.work"))
		if err != nil {
			t.Fatal(err)
		}
		if want := workspaceFile(mods, goLine(modJSON), v); string(work) != string(want) {
			t.Errorf("go.work is not what a release at %s writes:\n%s\nwant:\n%s", v, work, want)
		}
	}

	proxy := t.TempDir()
	if err := writeProxy(ctx, repo, mods, "v1.2.3", proxy); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(proxy, "github.com/ziplinekv/zipline/@v/v1.2.3.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	names := map[string]bool{}
	for _, f := range zr.File {
		names[strings.TrimPrefix(f.Name, "github.com/ziplinekv/zipline@v1.2.3/")] = true
	}
	for _, want := range []string{"go.mod", "LICENSE", "client.go", "codec/codec.go", "testdata/glide/README.md"} {
		if !names[want] {
			t.Errorf("the library's zip lacks %s", want)
		}
	}
	for name := range names {
		for _, nested := range []string{"testbed/", "otel/", "cmd/", "bench/", ".tools/"} {
			if strings.HasPrefix(name, nested) {
				t.Errorf("the library's zip holds %s, which belongs to another module (or none)", name)
			}
		}
	}
	gomod, err := os.ReadFile(filepath.Join(proxy, "github.com/ziplinekv/zipline/cmd/zipline/@v/v1.2.3.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "github.com/ziplinekv/zipline v1.2.3") {
		t.Errorf("the CLI's go.mod at v1.2.3 does not require the library at v1.2.3:\n%s", gomod)
	}
}

// TestNameRelease checks the changelog's Unreleased section becomes the
// release's, and that an empty one stops the release.
func TestNameRelease(t *testing.T) {
	in := "# Changelog\n\n## Unreleased\n\n### Added\n- x\n\n## v0.1.0 (2026-01-01)\n\n- y\n"
	out, err := nameRelease([]byte(in), "## v0.2.0 (2026-02-02)")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Changelog\n\n## Unreleased\n\n## v0.2.0 (2026-02-02)\n\n### Added\n- x\n\n## v0.1.0 (2026-01-01)\n\n- y\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := nameRelease([]byte("# Changelog\n\n## Unreleased\n\n## v0.1.0\n- y\n"), "## v0.2.0"); err == nil {
		t.Error("an empty Unreleased section was released")
	}
	for _, v := range []string{"v0.2.0", "v1.0.0", "v0.10.1-rc.1"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"0.2.0", "v2.0.0", "v0.2", "v0.02.0"} {
		if err := checkVersion(v); err == nil {
			t.Errorf("%s was accepted", v)
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := gitCmd(context.Background(), ".", "rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestAPICheckCatchesARemoval plants an exported method in a module, takes
// its baseline, removes the method, and checks that the API check fails
// and that rewriting the baseline is refused until the changelog names
// the removal.
func TestAPICheckCatchesARemoval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/planted\n\ngo 1.26.0\n")
	write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n- nothing yet\n")
	const keep = "package planted\n\n// T is a type.\ntype T struct{ Addr string }\n\n// Keep stays.\nfunc (t *T) Keep(n int) error { return nil }\n"
	write("t.go", keep+"\n// Planted goes.\nfunc (t T) Planted(s ...string) (int, error) { return 0, nil }\n")
	mods := []module{{Path: "example.com/planted", Dir: dir, Published: true}}
	var out strings.Builder
	if err := checkAPI(ctx, dir, mods, true, &out); err != nil {
		t.Fatalf("taking the baseline: %v\n%s", err, &out)
	}
	base, err := os.ReadFile(filepath.Join(dir, "api", "zipline.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "pkg example.com/planted, method (T) Planted(...string) (int, error)\n"; !strings.Contains(string(base), want) {
		t.Fatalf("the baseline lacks %q:\n%s", want, base)
	}
	if err := checkAPI(ctx, dir, mods, false, &out); err != nil {
		t.Fatalf("the API check fails on an unchanged module: %v\n%s", err, &out)
	}

	write("t.go", keep)
	out.Reset()
	if err := checkAPI(ctx, dir, mods, false, &out); err == nil {
		t.Fatal("the API check passed with an exported method removed")
	}
	if !strings.Contains(out.String(), "removed or changed: pkg example.com/planted, method (T) Planted") {
		t.Errorf("the report does not name the removed method:\n%s", &out)
	}
	out.Reset()
	if err := checkAPI(ctx, dir, mods, true, &out); err == nil {
		t.Fatal("the baseline dropped a method the changelog does not name")
	}
	write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n### Removed\n- `planted.T.Planted()`: use Keep.\n")
	out.Reset()
	if err := checkAPI(ctx, dir, mods, true, &out); err != nil {
		t.Fatalf("with the changelog naming the removal: %v\n%s", err, &out)
	}
	if err := checkAPI(ctx, dir, mods, false, &out); err != nil {
		t.Fatalf("after the baseline was rewritten: %v\n%s", err, &out)
	}
}

func TestFeatureName(t *testing.T) {
	for line, want := range map[string]string{
		"pkg p, method (*Client) Get(context.Context, string) ([]byte, error)": "Client.Get",
		"pkg p, method (*Future[T]) Val() T":                                   "Future.Val",
		"pkg p, func New(Options) (*Client, error)":                            "New",
		"pkg p, func Map[T any]([]T) T":                                        "Map",
		"pkg p, type Options struct, Addr string":                              "Options.Addr",
		"pkg p, type Options struct":                                           "Options",
		"pkg p, type Commands interface, Get(string) error":                    "Commands.Get",
		"pkg p, const Nil Error = \"x\"":                                       "Nil",
		"pkg p, var ErrClosed error":                                           "ErrClosed",
	} {
		if got := featureName(line); got != want {
			t.Errorf("featureName(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestNoRaceTestsRunWithoutRace checks that every test that skips under the
// race detector as a measurement (servertest.MeasuredWithoutRace) is named
// by the Makefile's NORACE_TESTS, the pattern of make test's pass without
// the detector: otherwise it would run in neither pass.
func TestNoRaceTestsRunWithoutRace(t *testing.T) {
	repo := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var pattern string
	for _, line := range strings.Split(string(makefile), "\n") {
		if rest, ok := strings.CutPrefix(line, "NORACE_TESTS := "); ok {
			pattern = rest
		}
	}
	if pattern == "" {
		t.Fatal("the Makefile defines no NORACE_TESTS")
	}
	norace := regexp.MustCompile(pattern)
	funcDecl := regexp.MustCompile(`^func (Test\w+)\(`)
	call := regexp.MustCompile(`^\s+servertest\.MeasuredWithoutRace\(`)
	found := 0
	err = filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != repo {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		test := ""
		for _, line := range strings.Split(string(data), "\n") {
			if m := funcDecl.FindStringSubmatch(line); m != nil {
				test = m[1]
			} else if strings.HasPrefix(line, "func ") {
				test = ""
			}
			if test != "" && call.MatchString(line) {
				found++
				if !norace.MatchString(test) {
					rel, _ := filepath.Rel(repo, path)
					t.Errorf("%s: %s skips under the race detector, but NORACE_TESTS does not run it without", rel, test)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("no test calls servertest.MeasuredWithoutRace: the check reads nothing")
	}
}
