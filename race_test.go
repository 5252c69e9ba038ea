//go:build race

package zipline

const raceEnabled = true
