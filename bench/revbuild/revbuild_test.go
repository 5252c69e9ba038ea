package revbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBuildHEAD builds clientbench against the committed HEAD and checks
// that the binary runs, that the checked-out tree is left as it was, and
// that nothing is left in the temporary directory.
func TestBuildHEAD(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	if err := exec.Command("git", "rev-parse", "--verify", "HEAD").Run(); err != nil {
		t.Skip("not in a git checkout:", err)
	}
	bin := filepath.Join(t.TempDir(), "clientbench")
	tmp := t.TempDir() // Build's own temporary files go here
	t.Setenv("TMPDIR", tmp)
	status := gitStatus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	hash, err := Build(ctx, Options{BenchDir: "..", Package: "./cmd/clientbench"}, "HEAD", bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(hash) != 40 {
		t.Errorf("hash %q", hash)
	}
	out, err := exec.Command(bin, "-clients", "nosuch").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "zipline") {
		t.Errorf("clientbench -clients nosuch: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	if after := gitStatus(t); after != status {
		t.Errorf("git status changed:\n%s\nto\n%s", status, after)
	}
}

func gitStatus(t *testing.T) string {
	out, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestReplaceFiles(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(src, "a.go", "new a")
	write(src, "a_test.go", "test")
	write(dst, "a.go", "old a")
	write(dst, "gone.go", "old")
	if err := os.Mkdir(filepath.Join(dst, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := replaceFiles(src, dst); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dst)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a.go", "sub"}) {
		t.Errorf("dst holds %v, want [a.go sub]", names)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a.go")); string(b) != "new a" {
		t.Errorf("a.go = %q", b)
	}
}
