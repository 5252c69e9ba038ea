//go:build !race

package servertest

// RaceEnabled says whether the race detector is on (go test -race).
const RaceEnabled = false
