package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// writeProxy writes dir as a module proxy (GOPROXY=file://dir) that serves
// every published module of mods at version, exactly as a registry would
// serve the release's tags: each module's files (the ones git tracks or
// would track, as a tag holds them, without the modules nested in its
// tree), with its requirements of the others set to version.
func writeProxy(ctx context.Context, root string, mods []module, version, dir string) error {
	for _, m := range mods {
		if !m.Published {
			continue
		}
		gomod, err := withRequirements(ctx, filepath.Join(m.Dir, "go.mod"), mods, version)
		if err != nil {
			return err
		}
		files, err := moduleFiles(ctx, root, m, mods)
		if err != nil {
			return err
		}
		escaped, err := escapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		if err := writeZip(filepath.Join(vdir, version+".zip"), m, version, files, gomod); err != nil {
			return err
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{version, time.Now().UTC().Truncate(time.Second)})
		if err != nil {
			return err
		}
		for name, data := range map[string][]byte{
			version + ".mod":  gomod,
			version + ".info": info,
			"list":            []byte(version + "\n"),
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleFiles returns m's files, relative to m.Dir and slash-separated:
// those git tracks or would track (not ignored), that exist, outside the
// directories of the modules nested in m's tree.
func moduleFiles(ctx context.Context, root string, m module, mods []module) ([]string, error) {
	out, err := gitCmd(ctx, m.Dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		inner := false
		for _, n := range mods {
			if n.Rel != m.Rel && (m.Rel == "" || strings.HasPrefix(n.Rel, m.Rel+"/")) &&
				strings.HasPrefix(name, n.Rel+"/") {
				inner = true
			}
		}
		if inner {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || !fi.Mode().IsRegular() { // deleted, or a link: no tag holds it as a file
			continue
		}
		rel := name
		if m.Rel != "" {
			rel = strings.TrimPrefix(name, m.Rel+"/")
		}
		files = append(files, rel)
	}
	return files, nil
}

// writeZip writes the module zip of m at version: its files under
// "path@version/", with gomod as its go.mod.
func writeZip(name string, m module, version string, files []string, gomod []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	prefix := m.Path + "@" + version + "/"
	for _, rel := range files {
		w, err := zw.Create(prefix + rel)
		if err != nil {
			f.Close()
			return err
		}
		if rel == "go.mod" {
			_, err = w.Write(gomod)
		} else {
			err = copyInto(w, filepath.Join(m.Dir, filepath.FromSlash(rel)))
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path.Join(m.Rel, rel), err)
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func copyInto(w io.Writer, name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// escapePath is the module path as a proxy's URLs and directories spell it:
// each upper-case letter as '!' and its lower case.
func escapePath(p string) (string, error) {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '!' || r >= unicode.MaxASCII:
			return "", fmt.Errorf("module path %q: cannot escape %q", p, r)
		case 'A' <= r && r <= 'Z':
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// gitCmd runs git in dir and returns its standard output.
func gitCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return runIn(ctx, dir, nil, "git", args...)
}
