package main

// cmdBench is "zipline bench <suite>": the benchmarks, each a command of
// its own with its own flags. The benchmarks that set zipline beside its
// peers (GLIDE's compression benchmark, DoorDash's) have their one front
// door in the bench module, which links the peers' clients: cd bench && go
// run ./cmd/compbench (or ./cmd/doordashbench), adding -tags glide for
// GLIDE Go.
var cmdBench = &command{
	name:     "bench",
	summary:  "benchmarks: layouts (the me-redis table); GLIDE's and DoorDash's run from the bench module",
	synopsis: "<suite> [flags]",
	doc: `Runs one of zipline's benchmarks. The benchmarks that set zipline beside its peers run from
the bench module, which links the peers' clients:

  cd bench && go run ./cmd/compbench -quick       GLIDE's compression benchmark (-tags glide adds GLIDE Go)
  cd bench && go run ./cmd/doordashbench -quick   DoorDash's table: large values over shaped loopback`,
	subs: []*command{cmdBenchLayouts},
	noun: "suite",
}
