package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Chromium returns the path of Debian's headless-capable browser, which the
// tests of pages (the analyze report, the fanout demo) drive. When it is
// missing and the process runs as root, it installs the package first
// (scripts/setup.sh does so too). The error matches ErrNoBinary when the
// browser is not there and cannot be installed.
func Chromium(ctx context.Context) (string, error) {
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%w: chromium is not installed (scripts/setup.sh installs it; apt-get install chromium as root)", ErrNoBinary)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "-qq", "chromium")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return "", fmt.Errorf("%w: chromium is not installed and apt-get install failed: %v\n%s", ErrNoBinary, err,
			strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		return "", fmt.Errorf("%w: chromium still not found after apt-get install: %v", ErrNoBinary, err)
	}
	return p, nil
}
