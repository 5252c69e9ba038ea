package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// unpublished are the workspace's modules that a release does not tag: the
// benchmarks against other clients, which nobody depends on. Their
// requirements of the published modules are set like everyone's, so that
// the workspace stays one graph.
var unpublished = map[string]bool{
	"github.com/ziplinekv/zipline/bench": true,
}

// module is one module of the repository, as go.work lists it.
type module struct {
	Path string // module path
	Dir  string // absolute directory
	// Rel is Dir relative to the repository's root, slash-separated: ""
	// for the root module. It prefixes the module's tags ("testbed/v0.2.0"),
	// as the go command expects of a module nested in a repository.
	Rel string
	// Requires are the repository's own modules this one requires, with
	// the version its go.mod gives.
	Requires  map[string]string
	Published bool
}

// tag is the name of the tag that releases m at version.
func (m module) tag(version string) string {
	if m.Rel == "" {
		return version
	}
	return m.Rel + "/" + version
}

// loadModules reads the repository's modules from go.work in root, in
// dependency order: a module comes after every one it requires.
func loadModules(ctx context.Context, root string) ([]module, error) {
	var work struct {
		Use []struct{ DiskPath string }
	}
	if err := goJSON(ctx, root, &work, "work", "edit", "-json"); err != nil {
		return nil, err
	}
	var mods []module
	for _, u := range work.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.DiskPath))
		var gomod struct {
			Module  struct{ Path string }
			Require []struct{ Path, Version string }
		}
		if err := goJSON(ctx, dir, &gomod, "mod", "edit", "-json"); err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		m := module{Path: gomod.Module.Path, Dir: dir, Rel: rel, Requires: map[string]string{},
			Published: !unpublished[gomod.Module.Path]}
		for _, r := range gomod.Require {
			m.Requires[r.Path] = r.Version
		}
		mods = append(mods, m)
	}
	own := map[string]bool{}
	for _, m := range mods {
		own[m.Path] = true
	}
	for i := range mods {
		for p := range mods[i].Requires {
			if !own[p] {
				delete(mods[i].Requires, p)
			}
		}
	}
	return dependencyOrder(mods)
}

// dependencyOrder sorts mods so that each comes after the modules it
// requires (ties by path), or fails on a cycle, which no release could tag.
func dependencyOrder(mods []module) ([]module, error) {
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	var out []module
	done := map[string]bool{}
	for len(out) < len(mods) {
		progressed := false
		for _, m := range mods {
			if done[m.Path] {
				continue
			}
			ready := true
			for p := range m.Requires {
				ready = ready && done[p]
			}
			if ready {
				out, done[m.Path], progressed = append(out, m), true, true
			}
		}
		if !progressed {
			return nil, fmt.Errorf("the repository's modules require each other in a cycle")
		}
	}
	return out, nil
}

// withRequirements returns the go.mod at path with every requirement of
// one of the modules own set to version: what the
// release commits, and what a module proxy serves for that version.
func withRequirements(ctx context.Context, path string, own []module, version string) ([]byte, error) {
	tmp, err := os.CreateTemp("", "release-*.mod")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	var gomod struct {
		Require []struct{ Path string }
	}
	if err := goJSON(ctx, filepath.Dir(path), &gomod, "mod", "edit", "-json", tmp.Name()); err != nil {
		return nil, err
	}
	ownPath := map[string]bool{}
	for _, m := range own {
		ownPath[m.Path] = true
	}
	args := []string{"mod", "edit"}
	for _, r := range gomod.Require {
		if ownPath[r.Path] {
			args = append(args, "-require="+r.Path+"@"+version)
		}
	}
	if len(args) > 2 {
		if _, err := goCmd(ctx, filepath.Dir(path), append(args, tmp.Name())...); err != nil {
			return nil, err
		}
	}
	return os.ReadFile(tmp.Name())
}

// workspaceFile is go.work for mods, with each of the repository's modules
// replaced by its directory at version: the version the modules require of
// each other between releases, which no proxy may serve yet (a release's
// requirements are committed before its tags exist), so that the workspace
// never asks a proxy for one of its own modules.
func workspaceFile(mods []module, goVersion, version string) []byte {
	var b bytes.Buffer
	b.WriteString(`// The repository's modules, developed together. Consumers never see this
// file: each published go.mod requires its siblings at a released version
// (make release sets them, and the replacements below), and this workspace
// points those requirements at the checkout.
`)
	fmt.Fprintf(&b, "go %s\n\nuse (\n", goVersion)
	byRel := append([]module(nil), mods...)
	sort.Slice(byRel, func(i, j int) bool { return byRel[i].Rel < byRel[j].Rel })
	for _, m := range byRel {
		fmt.Fprintf(&b, "\t%s\n", useDir(m.Rel))
	}
	b.WriteString(")\n\nreplace (\n")
	for _, m := range byRel {
		if m.Published {
			fmt.Fprintf(&b, "\t%s %s => %s\n", m.Path, version, useDir(m.Rel))
		}
	}
	b.WriteString(")\n")
	return b.Bytes()
}

func useDir(rel string) string {
	if rel == "" {
		return "."
	}
	return "./" + rel
}

// goCmd runs the go command in dir and returns its standard output.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return runIn(ctx, dir, nil, "go", args...)
}

// runIn runs a program in dir, with env added to the process's
// environment, and returns its standard output; the error carries its
// standard error.
func runIn(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s (in %s): %w\n%s", name, strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// goJSON runs the go command in dir and decodes its JSON output into v.
func goJSON(ctx context.Context, dir string, v any, args ...string) error {
	out, err := goCmd(ctx, dir, args...)
	if err != nil {
		return err
	}
	return json.Unmarshal(out, v)
}
