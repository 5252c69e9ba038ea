package servertest

import "testing"

// MeasuredWithoutRace skips t under the race detector. It is for tests that
// measure (memory against a prediction, an encoder's output against a
// goal) on a workload large enough to measure, where the detector makes
// the client five to ten times slower and races nothing the race-enabled
// tests do not: make test runs them in its second pass, without the
// detector, by name (NORACE_TESTS in the Makefile, which a test checks
// against every caller of this function).
func MeasuredWithoutRace(t testing.TB) {
	t.Helper()
	if RaceEnabled {
		t.Skip("a measurement: make test runs it without the race detector (NORACE_TESTS)")
	}
}
