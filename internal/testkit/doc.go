// Package testkit is zipline's test support: real servers started for a
// test and stopped when it ends, and the tools that break them on purpose.
// Only tests import it; the command-line tool never links it (it starts
// its servers with internal/localserver, which this package builds on).
package testkit
