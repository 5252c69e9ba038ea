// Command release releases the repository's modules together, and serves
// them as a registry would, for the checks that a release can be depended
// on.
//
//	go run ./internal/release -version v0.2.0       what a release would change and tag (a dry run)
//	go run ./internal/release -version v0.2.0 -do   make it: set requirements, check, commit, tag
//	go run ./internal/release proxy -version v0.2.0 -dir DIR
//	                                                 a module proxy (GOPROXY=file://DIR) of the checkout at v0.2.0
//	go run ./internal/release tidy                  go mod tidy in every module, against the checkout
//	go run ./internal/release api [-write]          the exported API against its baseline in api/
//
// (make release VERSION=v0.2.0 [DO=1], make tidy, make api.)
//
// The modules are those go.work uses. Each published go.mod requires its
// siblings at the last release's version, never through a replace
// directive, which consumers' go install pkg@version refuses; go.work
// points those versions at the checkout for local development. A release
// sets every such requirement (and go.work's replacements) to the new
// version, names the version in CHANGELOG.md, checks the exported API
// against its baseline and that a fresh module can depend on the result,
// commits, and tags the published modules in dependency order with the
// names the go command expects of nested modules (testbed/v0.2.0, v0.2.0,
// otel/v0.2.0, cmd/zipline/v0.2.0). Pushing is left to the caller.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	root, err := gitCmd(ctx, ".", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	repo := strings.TrimSpace(string(root))
	verb := "release"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		verb, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("release "+verb, flag.ContinueOnError)
	version := fs.String("version", "", "the version to release, e.g. v0.2.0")
	do := fs.Bool("do", false, "make the release (without it: print what it would do)")
	dir := fs.String("dir", "", "proxy: the directory to write the module proxy into")
	write := fs.Bool("write", false, "api: rewrite the baselines in api/ (a removal must be named in CHANGELOG.md)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mods, err := loadModules(ctx, repo)
	if err != nil {
		return err
	}
	switch verb {
	case "release":
		if err := checkVersion(*version); err != nil {
			return err
		}
		return release(ctx, repo, mods, *version, *do, out)
	case "proxy":
		if err := checkVersion(*version); err != nil {
			return err
		}
		if *dir == "" {
			return errors.New("proxy: -dir is required")
		}
		return writeProxy(ctx, repo, mods, *version, *dir)
	case "tidy":
		return tidy(ctx, repo, mods, out)
	case "api":
		return checkAPI(ctx, repo, mods, *write, out)
	}
	return fmt.Errorf("unknown command %q (release, proxy, tidy, api)", verb)
}

// semver is a release version the go command accepts for a module whose
// path has no major-version suffix: v0 or v1.
var semver = regexp.MustCompile(`^v[01]\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

func checkVersion(v string) error {
	if !semver.MatchString(v) {
		return fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH with MAJOR 0 or 1 (a v2 needs /v2 module paths), e.g. v0.2.0", v)
	}
	return nil
}

// unreleasedHeading is the section of CHANGELOG.md that collects changes
// until a release names it.
const unreleasedHeading = "## Unreleased"

// release sets the requirements to version, checks, commits and tags; with
// do false it only prints the plan.
func release(ctx context.Context, repo string, mods []module, version string, do bool, out io.Writer) error {
	say := func(format string, a ...any) { fmt.Fprintf(out, format+"\n", a...) }
	if !do {
		say("dry run: nothing is written (add -do, or DO=1, to release)")
	}
	var problems []string
	if status, err := gitCmd(ctx, repo, "status", "--porcelain"); err != nil {
		return err
	} else if len(bytes.TrimSpace(status)) > 0 {
		problems = append(problems, "the working tree has uncommitted changes")
	}
	for _, m := range mods {
		if !m.Published {
			continue
		}
		if _, err := gitCmd(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/tags/"+m.tag(version)); err == nil {
			problems = append(problems, "tag "+m.tag(version)+" exists")
		}
	}
	changelog, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		return err
	}
	heading := fmt.Sprintf("## %s (%s)", version, time.Now().UTC().Format("2006-01-02"))
	named, err := nameRelease(changelog, heading)
	if err != nil {
		problems = append(problems, err.Error())
	}

	say("modules, in the order they are tagged:")
	for _, m := range mods {
		gomod := filepath.Join(m.Dir, "go.mod")
		before, err := os.ReadFile(gomod)
		if err != nil {
			return err
		}
		after, err := withRequirements(ctx, gomod, mods, version)
		if err != nil {
			return err
		}
		tag := "(not published: no tag)"
		if m.Published {
			tag = "tag " + m.tag(version)
		}
		say("  %-40s %s", m.Path, tag)
		for _, line := range changedLines(before, after) {
			say("      go.mod: %s", line)
		}
		if do && !bytes.Equal(before, after) {
			if err := os.WriteFile(gomod, after, 0o644); err != nil {
				return err
			}
		}
	}
	say("CHANGELOG.md: %q becomes %q", unreleasedHeading, heading)
	say("go.work: the modules replaced by their directories at %s", version)
	if len(problems) > 0 {
		for _, p := range problems {
			say("cannot release: %s", p)
		}
		if do {
			return errors.New("not released")
		}
		return nil
	}
	if !do {
		say("then: the exported API against api/, a fresh module's go get, tidy, build, vet and go install from a proxy of the result, a commit and the tags")
		return nil
	}
	goVersion, err := goCmd(ctx, repo, "mod", "edit", "-json")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, "go.work"), workspaceFile(mods, goLine(goVersion), version), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, "CHANGELOG.md"), named, 0o644); err != nil {
		return err
	}
	say("checking the exported API against its baseline")
	if err := checkAPI(ctx, repo, mods, false, out); err != nil {
		return err
	}
	say("checking that a fresh module can depend on the release and install the CLI")
	work, err := os.MkdirTemp("", "release-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := writeProxy(ctx, repo, mods, version, filepath.Join(work, "proxy")); err != nil {
		return err
	}
	if err := checkConsumer(ctx, filepath.Join(work, "proxy"), version, work); err != nil {
		return err
	}
	if _, err := gitCmd(ctx, repo, "commit", "-q", "-a", "-m", "Release "+version); err != nil {
		return err
	}
	var tags []string
	for _, m := range mods {
		if m.Published {
			if _, err := gitCmd(ctx, repo, "tag", "-a", "-m", m.Path+" "+version, m.tag(version)); err != nil {
				return err
			}
			tags = append(tags, m.tag(version))
		}
	}
	say("released %s; publish it with: git push origin HEAD %s", version, strings.Join(tags, " "))
	return nil
}

// nameRelease returns changelog with its Unreleased section headed by
// heading, and a fresh empty Unreleased section above it.
func nameRelease(changelog []byte, heading string) ([]byte, error) {
	i := bytes.Index(changelog, []byte("\n"+unreleasedHeading+"\n"))
	if i < 0 {
		return nil, fmt.Errorf("CHANGELOG.md has no %q section", unreleasedHeading)
	}
	body := changelog[i+len(unreleasedHeading)+2:]
	if next := bytes.Index(body, []byte("\n## ")); next >= 0 {
		body = body[:next]
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("CHANGELOG.md's %q section is empty: say what the release changes", unreleasedHeading)
	}
	var b bytes.Buffer
	b.Write(changelog[:i+1])
	b.WriteString(unreleasedHeading + "\n\n" + heading + "\n")
	b.Write(changelog[i+len(unreleasedHeading)+2:])
	return b.Bytes(), nil
}

// changedLines lists the lines of after that before does not have.
func changedLines(before, after []byte) []string {
	had := map[string]bool{}
	for _, l := range strings.Split(string(before), "\n") {
		had[l] = true
	}
	var out []string
	for _, l := range strings.Split(string(after), "\n") {
		if !had[l] && strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// goLine reads the go version from go mod edit -json output.
func goLine(modJSON []byte) string {
	m := regexp.MustCompile(`"Go":\s*"([^"]+)"`).FindSubmatch(modJSON)
	if m == nil {
		return "1.26.0"
	}
	return string(m[1])
}

// tidy runs go mod tidy in every module outside the workspace, as each
// module's own users see it, against a module proxy of the checkout at the
// version the modules require of each other (which may not be published
// yet), then drops the checksums of the repository's own modules from
// each go.sum: those are the checkout's, not a release's.
func tidy(ctx context.Context, repo string, mods []module, out io.Writer) error {
	version := ""
	for _, m := range mods {
		for _, v := range m.Requires {
			if version != "" && v != version {
				return fmt.Errorf("the modules require each other at %s and %s: run a release's requirements first", version, v)
			}
			version = v
		}
	}
	if version == "" {
		return errors.New("no module requires another")
	}
	work, err := os.MkdirTemp("", "release-tidy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	proxy := filepath.Join(work, "proxy")
	if err := writeProxy(ctx, repo, mods, version, proxy); err != nil {
		return err
	}
	env, err := isolatedEnv(ctx, proxy, work)
	if err != nil {
		return err
	}
	for _, m := range mods {
		fmt.Fprintf(out, "go mod tidy in %s\n", useDir(m.Rel))
		if _, err := runIn(ctx, m.Dir, env, "go", "mod", "tidy"); err != nil {
			return err
		}
		sum := filepath.Join(m.Dir, "go.sum")
		data, err := os.ReadFile(sum)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		var kept []string
		for _, line := range strings.SplitAfter(string(data), "\n") {
			own := false
			for _, o := range mods {
				own = own || strings.HasPrefix(line, o.Path+" ")
			}
			if !own {
				kept = append(kept, line)
			}
		}
		if err := os.WriteFile(sum, []byte(strings.Join(kept, "")), 0o644); err != nil {
			return err
		}
	}
	return nil
}
