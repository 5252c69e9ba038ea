// Package revbuild builds a command of the bench module against the zipline
// module as it was at a git revision.
//
// A Go binary links one version of a module, so measuring two revisions of
// the client side by side takes two binaries. Build makes one without
// touching the checked-out tree: it extracts the revision with git archive
// into a temporary directory, and builds outside the repository's workspace
// (GOWORK=off) with a temporary copy of the bench module's go.mod and go.sum
// (go build -modfile) whose replace directives point the zipline module at
// that directory and the modules nested in its tree at the checkout. Both are removed before
// Build returns, whether it succeeds or not.
//
// Only the client comes from the revision. The bench module (adapters,
// package harness, reports) is the checked-out one, and so are the modules
// nested in the zipline module's tree (the CLI's helper packages: latency
// histograms, /proc readers; the test bed's local server), which the
// extracted revision loses, and the helper packages it imports from the
// zipline module itself: every package of the zipline module that the
// command imports but the zipline client package does not, at either tree,
// is copied from the checked-out tree over the extracted revision. Both
// binaries therefore measure with the same code, and a revision from before
// a helper package moved still builds. A revision whose client API no
// longer fits the bench adapters fails to compile, with the compiler's
// message in the error.
package revbuild

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ZiplineModule is the module path whose version Build swaps.
const ZiplineModule = "github.com/ziplinekv/zipline"

// Options says what to build.
type Options struct {
	// BenchDir is the bench module's directory: its go.mod, go.sum and
	// packages are used as they are checked out.
	BenchDir string
	// Repo is a directory inside the git repository that holds the
	// revisions. Empty means the zipline module BenchDir's go.mod points at.
	Repo string
	// Package is the package to build, relative to BenchDir, e.g.
	// "./cmd/clientbench".
	Package string
	// Tags are build tags, e.g. "glide" to build the GLIDE adapter in.
	Tags []string
}

// Build compiles o.Package to the executable out with the zipline module at
// rev (anything git rev-parse accepts), and returns rev's full commit hash.
func Build(ctx context.Context, o Options, rev, out string) (hash string, err error) {
	bench, err := filepath.Abs(o.BenchDir)
	if err != nil {
		return "", err
	}
	if out, err = filepath.Abs(out); err != nil {
		return "", err
	}
	b := builder{dir: bench, tags: o.Tags}
	checkedOut, err := b.run(ctx, "go", "list", "-m", "-f", "{{.Dir}}", ZiplineModule)
	if err != nil {
		return "", err
	}
	repo := o.Repo
	if repo == "" {
		repo = strings.TrimSpace(checkedOut)
	}
	if hash, err = b.run(ctx, "git", "-C", repo, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}"); err != nil {
		return "", fmt.Errorf("revision %q: %w", rev, err)
	}
	hash = strings.TrimSpace(hash)

	tmp, err := os.MkdirTemp("", "revbuild-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "zipline")
	if err := extract(ctx, repo, hash, src); err != nil {
		return "", err
	}
	// The modules that live inside the zipline module's tree (the CLI, the
	// test bed) come from the checkout, through replace directives in the
	// temporary go.mod. A revision from before one of them
	// became a module holds its packages inside the zipline module; they
	// are dropped from the extracted tree, or a package would be found in
	// two modules.
	nested, err := nestedModules(strings.TrimSpace(checkedOut))
	if err != nil {
		return "", err
	}
	for _, rel := range nested {
		if err := os.RemoveAll(filepath.Join(src, rel)); err != nil {
			return "", err
		}
	}
	modfile := filepath.Join(tmp, "build.mod") // go derives build.sum from it
	if err := copyFile(filepath.Join(bench, "go.mod"), modfile); err != nil {
		return "", err
	}
	if err := copyFile(filepath.Join(bench, "go.sum"), filepath.Join(tmp, "build.sum")); err != nil {
		return "", err
	}
	edits := []string{"mod", "edit", "-modfile=" + modfile, "-replace=" + ZiplineModule + "=" + src}
	self, err := b.run(ctx, "go", "list", "-m", "-f", "{{.Path}}")
	if err != nil {
		return "", err
	}
	for _, rel := range nested {
		dir := filepath.Join(strings.TrimSpace(checkedOut), rel)
		path, err := modulePath(filepath.Join(dir, "go.mod"))
		if err != nil {
			return "", err
		}
		if path != strings.TrimSpace(self) { // the bench module is the main module
			edits = append(edits, "-replace="+path+"="+dir)
		}
	}
	if _, err := b.run(ctx, "go", edits...); err != nil {
		return "", err
	}

	// Which zipline packages are helpers rather than client.
	command, err := b.modulePackages(ctx, "", o.Package)
	if err != nil {
		return "", err
	}
	clientNow, err := b.modulePackages(ctx, "", ZiplineModule)
	if err != nil {
		return "", err
	}
	clientThen, err := b.modulePackages(ctx, modfile, ZiplineModule)
	if err != nil {
		return "", fmt.Errorf("the zipline package at %.12s: %w", hash, err)
	}
	for path, dir := range command {
		if _, ok := clientNow[path]; ok {
			continue
		}
		if _, ok := clientThen[path]; ok {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, ZiplineModule), "/")
		if err := replaceFiles(dir, filepath.Join(src, filepath.FromSlash(rel))); err != nil {
			return "", err
		}
	}

	args := []string{"build", "-modfile=" + modfile, "-mod=mod", "-o", out}
	if len(o.Tags) > 0 {
		args = append(args, "-tags="+strings.Join(o.Tags, ","))
	}
	if _, err := b.run(ctx, "go", append(args, o.Package)...); err != nil {
		return "", fmt.Errorf("building %s at %.12s: %w", o.Package, hash, err)
	}
	return hash, nil
}

// builder runs the go and git commands of one build in the bench module.
type builder struct {
	dir  string
	tags []string
}

// run runs a command in b.dir and returns its standard output; the error
// carries its standard error. A go command given a -modfile runs outside
// the repository's workspace (go refuses -modfile in workspace mode).
func (b builder) run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = b.dir
	for _, a := range args {
		if strings.HasPrefix(a, "-modfile=") {
			cmd.Env = append(os.Environ(), "GOWORK=off")
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// modulePackages returns the packages of the zipline module that pkg is or
// imports, import path to directory, as built with modfile ("" for the
// bench module's own go.mod).
func (b builder) modulePackages(ctx context.Context, modfile, pkg string) (map[string]string, error) {
	args := []string{"list", "-deps", "-f",
		`{{with .Module}}{{if eq .Path "` + ZiplineModule + `"}}{{$.ImportPath}}{{"\t"}}{{$.Dir}}{{end}}{{end}}`}
	if modfile != "" {
		args = append(args, "-modfile="+modfile, "-mod=mod")
	}
	if len(b.tags) > 0 {
		args = append(args, "-tags="+strings.Join(b.tags, ","))
	}
	out, err := b.run(ctx, "go", append(args, pkg)...)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if path, dir, ok := strings.Cut(sc.Text(), "\t"); ok {
			pkgs[path] = dir
		}
	}
	return pkgs, sc.Err()
}

// extract writes the tree of commit hash into dir with git archive | tar.
func extract(ctx context.Context, repo, hash, dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	archive := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", hash)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var archiveStderr, untarStderr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveStderr, &untarStderr
	if err := archive.Start(); err != nil {
		return err
	}
	untarErr := untar.Run()
	if untarErr != nil {
		archive.Process.Kill()
	}
	// A failing git archive makes tar fail too; its own message says why.
	if archiveErr := archive.Wait(); archiveErr != nil && (untarErr == nil || archiveStderr.Len() > 0) {
		return fmt.Errorf("git archive %s: %w: %s", hash, archiveErr, strings.TrimSpace(archiveStderr.String()))
	}
	if untarErr != nil {
		return fmt.Errorf("tar -x: %w: %s", untarErr, strings.TrimSpace(untarStderr.String()))
	}
	return nil
}

// nestedModules returns the directories under root, relative to it, that
// hold a go.mod of their own (modules nested in root's), leaving out
// hidden directories and testdata.
func nestedModules(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || path == root {
			return nil
		}
		if name := d.Name(); strings.HasPrefix(name, ".") || name == "testdata" {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			out = append(out, rel)
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// modulePath returns the module path a go.mod file declares.
func modulePath(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s declares no module", gomod)
}

// replaceFiles makes the regular files of directory dst those of src,
// leaving test files and subdirectories (other packages) out of it.
func replaceFiles(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	old, err := os.ReadDir(dst)
	if err != nil {
		return err
	}
	for _, e := range old {
		if e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	}
	files, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range files {
		if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), "_test.go") {
			if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
