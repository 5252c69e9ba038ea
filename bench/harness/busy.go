package harness

import (
	"fmt"
	"os/exec"
	"syscall"
)

// Busy starts n CPU-bound processes (a shell spinning, each in a process
// group of its own) to run beside a benchmark, as on a production host,
// which is rarely idle: it is where a client's scheduling hand-offs cost
// most. stop kills them and waits for them; a second signal does too (see
// AtAbort). A quiet-machine gate would wait on them forever: turn it off
// while they run.
func Busy(n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	kill := func() {
		for _, c := range cmds {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
	}
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			kill()
			return nil, fmt.Errorf("busy: %w", err)
		}
		cmds = append(cmds, c)
	}
	unregister := AtAbort(kill)
	return func() {
		unregister()
		kill()
		for _, c := range cmds {
			c.Wait()
		}
	}, nil
}

// BusyLine describes Busy's processes for a report's environment.
func BusyLine(n int) string {
	return fmt.Sprintf("busy: %d CPU-bound processes (`sh -c 'while :; do :; done'`) ran beside the benchmark "+
		"for its whole length (-busy %d); the quiet-machine gate was off", n, n)
}
