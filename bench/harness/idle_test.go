package harness

import (
	"strings"
	"testing"
)

func TestIdleSetting(t *testing.T) {
	line, release, err := IdleSetting("os")
	if err != nil || !strings.Contains(line, "-idle os") {
		t.Fatalf("IdleSetting(os) = %q, %v", line, err)
	}
	release()
	if _, _, err := IdleSetting("halt"); err == nil || !strings.Contains(err.Error(), "want poll or os") {
		t.Errorf("IdleSetting(halt): error %v, want one naming the choices", err)
	}
	// poll holds /dev/cpu_dma_latency where it can (root on Linux), and
	// otherwise says how to go on without it.
	line, release, err = IdleSetting("poll")
	if err != nil {
		if !strings.Contains(err.Error(), "-idle os") {
			t.Errorf("IdleSetting(poll): error %v does not name -idle os", err)
		}
		return
	}
	defer release()
	if !strings.Contains(line, "polling") {
		t.Errorf("IdleSetting(poll) = %q", line)
	}
}
