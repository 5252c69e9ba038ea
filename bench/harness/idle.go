package harness

import (
	"fmt"
	"os"
)

// Idle CPUs and the points at one and eight callers.
//
// At one caller a round trip on loopback is mostly two idle CPUs waking up:
// the server's when the request arrives, the client's when the reply does.
// On a virtual machine whose idle CPUs halt, that wake-up takes tens of
// microseconds and dwarfs the client's own work, and how often it happens
// depends on which threads a client happens to wake, not on what its code
// costs. Measured on the 2-vCPU machine of bench/RESULTS.md#client-ab,
// GET 64 B at one caller: base-issue8 18.9 kops/s, main 16.3 (0.89) with
// idle CPUs halting; 45.6 and 60.2 (1.33) with them polling. The client's
// CPU per GET is lower in main either way.
//
// So by default abbench (and clientbench with -idle poll) asks the kernel to keep idle CPUs polling for the
// run, the usual setting for latency measurements (tuned's
// latency-performance profile does the same): a PM QoS request of 0 µs
// through /dev/cpu_dma_latency, held as long as the file stays open. Both
// revisions run under the same setting; the report says which one held.
// -idle os leaves the CPUs to the kernel's idle governor.

// holdIdlePolling asks for CPUs that never enter an idle state with an exit
// latency, and returns the function that ends the request. It needs root.
func holdIdlePolling() (release func(), err error) {
	f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	// The request is a 32-bit count of microseconds in the machine's byte
	// order; zero reads the same in every order.
	var zero [4]byte
	if _, err := f.Write(zero[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing /dev/cpu_dma_latency: %w", err)
	}
	return func() { f.Close() }, nil
}

// IdleSetting applies -idle and returns the report's line for it, and the
// function to call when the run ends.
func IdleSetting(mode string) (line string, release func(), err error) {
	switch mode {
	case "os":
		return "idle CPUs: the kernel's idle governor (-idle os)", func() {}, nil
	case "poll":
		release, err := holdIdlePolling()
		if err != nil {
			return "", nil, fmt.Errorf("-idle poll: %w (run as root, or pass -idle os)", err)
		}
		return "idle CPUs: polling for the whole run (-idle poll: /dev/cpu_dma_latency held at 0 µs)", release, nil
	}
	return "", nil, fmt.Errorf("-idle %q: want poll or os", mode)
}
