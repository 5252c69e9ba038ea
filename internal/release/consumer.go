package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// consumerMain is the application of checkConsumer: it links the library
// and the otel module, as a service that depends on both would.
const consumerMain = `package main

import (
	"context"
	"fmt"

	"github.com/ziplinekv/zipline"
	ziplineotel "github.com/ziplinekv/zipline/otel"
)

func main() {
	opts := zipline.Options{Addr: "127.0.0.1:1", LazyConnect: true}
	if err := ziplineotel.Instrument(&opts); err != nil {
		fmt.Println(err)
		return
	}
	c, err := zipline.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(zipline.Nil)
	_ = context.Background()
}
`

// checkConsumer does what a new user of the release does, against the
// module proxy in proxyDir serving the repository's modules at version:
// in a fresh module in work, go get the library and the otel module, go
// mod tidy, go build and go vet; then go install the CLI at version and
// run its --version, which must name version. The go command runs in
// isolatedEnv.
func checkConsumer(ctx context.Context, proxyDir, version, work string) error {
	app := filepath.Join(work, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.26.0\n",
		"main.go": consumerMain,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(app, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	env, err := isolatedEnv(ctx, proxyDir, work)
	if err != nil {
		return err
	}
	bin := filepath.Join(work, "bin")
	env = append(env, "GOBIN="+bin)
	lib := "github.com/ziplinekv/zipline"
	steps := [][]string{
		{"go", "get", lib + "@" + version, lib + "/otel@" + version},
		{"go", "mod", "tidy"},
		{"go", "build", "./..."},
		{"go", "vet", "./..."},
		{"go", "install", lib + "/cmd/zipline@" + version},
	}
	for _, s := range steps {
		if _, err := runIn(ctx, app, env, s[0], s[1:]...); err != nil {
			return err
		}
	}
	gomod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(gomod), lib+" "+version) {
		return fmt.Errorf("after go mod tidy, the application's go.mod does not require %s %s:\n%s", lib, version, gomod)
	}
	out, err := runIn(ctx, app, env, filepath.Join(bin, "zipline"), "--version")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(out), "zipline "+version) {
		return fmt.Errorf("zipline --version printed %q, not version %s", strings.TrimSpace(string(out)), version)
	}
	return nil
}

// isolatedEnv is the environment of a go command that sees the module
// proxy in proxyDir first, then the module cache this machine already has,
// then the configured GOPROXY, with a module cache of its own under work,
// so that nothing of the checkout's modules stays behind; outside any
// workspace, and without a checksum database, which knows no release that
// is not published yet.
func isolatedEnv(ctx context.Context, proxyDir, work string) ([]string, error) {
	out, err := goCmd(ctx, work, "env", "GOMODCACHE", "GOPROXY")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("go env GOMODCACHE GOPROXY: %q", out)
	}
	proxies := []string{"file://" + filepath.ToSlash(proxyDir),
		"file://" + filepath.ToSlash(filepath.Join(lines[0], "cache", "download"))}
	if lines[1] != "" && lines[1] != "off" {
		proxies = append(proxies, lines[1])
	}
	return []string{
		"GOPROXY=" + strings.Join(proxies, ","),
		"GOMODCACHE=" + filepath.Join(work, "modcache"),
		"GOFLAGS=-modcacherw", // so that work can be removed
		"GONOSUMDB=", "GONOSUMCHECK=", "GOPRIVATE=", "GOSUMDB=off",
		"GOWORK=off", "GOTOOLCHAIN=local",
	}, nil
}
