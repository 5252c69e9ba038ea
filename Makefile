# The two commands a new machine needs; each installs what it is missing.
#   make demo   run the main job: the demo against a local redis-server
#   make test   run vet, the checks of generated code, the exported API and
#               the layering, the race-enabled tests and the fuzz seed corpora
#               of every module (the library, testbed, cmd/zipline, otel;
#               bench without the race detector), then the allocation tests
#               without it
.PHONY: demo test fuzz bench soak scale bench-compression bench-ab spec release tidy api

# The modules are developed together through go.work; one go command sees
# them all, so their tests share one schedule. Most of a package's time is
# spent waiting for servers (a cluster forming, a failover, a timeout), not
# on a processor, so four test binaries run at once on two cores.
PACKAGES := ./... ./testbed/... ./cmd/zipline/... ./otel/...
TESTFLAGS := -count=1 -p 4

demo:
	scripts/setup.sh redis
	go -C cmd/zipline run . demo

test:
	scripts/setup.sh
	go vet $(PACKAGES) ./bench/...
	go run ./internal/cmdspec/gen -check # the generated code is current
	go run ./internal/release api        # the exported API is its baseline's (api/)
	scripts/check-layers.sh
	go test -race $(TESTFLAGS) $(PACKAGES)
	go test $(TESTFLAGS) ./bench/...
	go test $(TESTFLAGS) -run '$(NORACE_TESTS)' $(PACKAGES)

# The tests that skip under the race detector, run once more without it: the
# allocation tests (the detector allocates) and the measurements
# (servertest.MeasuredWithoutRace: the detector slows the client five to ten
# times and races nothing the other tests do not). internal/release's
# TestNoRaceTestsRunWithoutRace checks that every measurement is named here.
NORACE_TESTS := Alloc|TestIdleConnectionMemory|TestClusterSimulated1000Nodes|TestLZ4BlockLenMalformed|TestAnalyzeAccuracy|TestAnalyzeDictAccuracy|TestAnalyzeCalibrate|TestServerDictionaryGoal|TestCostTable

# A long fuzz run of each target (not part of CI): make fuzz FUZZTIME=10m
FUZZTIME ?= 1m
fuzz:
	go test -run='^$$' -fuzz=FuzzReader -fuzztime=$(FUZZTIME) ./internal/resp
	go test -run='^$$' -fuzz=FuzzDecode -fuzztime=$(FUZZTIME) ./codec
	go test -run='^$$' -fuzz=FuzzRoundTrip -fuzztime=$(FUZZTIME) ./codec
	go test -run='^$$' -fuzz=FuzzReadMessage -fuzztime=$(FUZZTIME) ./fanout/internal/wsproto
	go test -run='^$$' -fuzz=FuzzParseExtensions -fuzztime=$(FUZZTIME) ./fanout/internal/wsproto

# The comparisons with other clients, in the bench module (see bench/README.md):
# the client comparison, and the compression benchmark beside GLIDE Go (cgo).
# The CLI runs zipline's own memory table: go -C cmd/zipline run . bench layouts.
bench:
	scripts/setup.sh redis
	cd bench && go run ./cmd/clientbench -out results/clients.md

bench-compression:
	scripts/setup.sh redis
	cd bench && go run -tags glide ./cmd/compbench -out results/compression.md

# Ten minutes of mixed load through random faults, checking that goroutines,
# heap and file descriptors stay flat, and the day-two operations longer:
# rolling restarts twice round, six reshards, 40 credential rotations, 30
# certificate renewals (not part of CI): make soak SOAK=10m
SOAK ?= 10m
soak:
	scripts/setup.sh
	go test -race -run '^(TestSoak|TestClusterRollingRestartUnderLoad|TestSentinelRollingRestartUnderLoad|TestClusterReshardUnderLoad|TestCredentialsRotateUnderLoad|TestCertificatesRenewUnderLoad)$$' -count=1 -timeout 0 -v . -soak=$(SOAK)
	go test -race -run '^TestStoreRollingRestartUnderLoad$$' -count=1 -timeout 0 -v ./layout -soak=$(SOAK)

# A cluster of 48 primaries (and their replicas) and 200 clients in one
# process, through a slot move, a failover and a reshard of 2,000 slots
# under load: topology queries per node per second, time until every client
# is current, connections per node, heap per client (not part of CI;
# minutes, about 2 GiB): make scale
scale:
	scripts/setup.sh redis
	go test -run '^TestScale$$' -count=1 -timeout 0 -v . -scale

# The client at two revisions, interleaved on one server (bench/README.md, "A/B"):
#   make bench-ab BASE=<rev> [NEW=<rev>, default HEAD] [ABFLAGS='-rounds 9 -out results/ab.md']
NEW ?= HEAD
bench-ab:
	@test -n "$(BASE)" || { echo 'usage: make bench-ab BASE=<rev> [NEW=<rev>] [ABFLAGS=...]'; exit 2; }
	scripts/setup.sh redis
	cd bench && go run ./cmd/abbench -a '$(NEW)' -b '$(BASE)' $(ABFLAGS)

# The differential test against go-redis, long (not part of CI): every mode,
# DIFFTEST_N commands each, on a fresh seed unless DIFFTEST_SEED is given
# (bench/difftest/doc.go): make difftest [DIFFTEST_N=100000] [DIFFTEST_SEED=7]
.PHONY: difftest
DIFFTEST_N ?= 100000
DIFFTEST_SEED ?= random
difftest:
	scripts/setup.sh redis valkey
	cd bench && go test -count=1 -timeout 0 -run '^TestDifferential$$' ./difftest/ -difftest.n=$(DIFFTEST_N) -difftest.seed=$(DIFFTEST_SEED)

# The command spec: what Redis 7.0 and Valkey 9.1 say of their commands
# (COMMAND DOCS and INFO), kept in internal/cmdspec/servers.json, then the
# code generated from it (go generate).
spec:
	scripts/setup.sh redis valkey
	go run ./internal/cmdspec/fetch -out internal/cmdspec/servers.json
	go generate .

# zipline analyze on a throwaway local server filled with about a million keys of mixed data (JSON
# records, counters, sessions, large documents, with and without TTLs; analyze.FillDemo): the scan
# at the default rate (20,000 keys/s), the table on stdout and the HTML report in
# analyze-report.html. Not part of CI: make analyze-demo [ANALYZE_DEMO_KIND=valkey] [ANALYZE_DEMO_KEYS=N]
.PHONY: analyze-demo
ANALYZE_DEMO_KIND ?= redis
ANALYZE_DEMO_KEYS ?= 1000000
analyze-demo:
	scripts/setup.sh $(ANALYZE_DEMO_KIND)
	go -C cmd/zipline run . analyze -demo $(ANALYZE_DEMO_KEYS) -kind $(ANALYZE_DEMO_KIND) -html $(CURDIR)/analyze-report.html

# A release of every published module at VERSION (internal/release): a dry
# run that prints what would change and be tagged, unless DO=1, which sets
# the modules' requirements of each other, names the version in
# CHANGELOG.md, checks the API and that a fresh module can depend on the
# result, commits and tags (testbed/VERSION, VERSION, cmd/zipline/VERSION,
# otel/VERSION). make release VERSION=v0.2.0 [DO=1]
release:
	@test -n "$(VERSION)" || { echo 'usage: make release VERSION=v0.x.y [DO=1]'; exit 2; }
	go run ./internal/release -version '$(VERSION)' $(if $(DO),-do)

# go mod tidy in every module, as its users see it (outside the workspace,
# against a module proxy of the checkout).
tidy:
	go run ./internal/release tidy

# Rewrite the exported-API baselines in api/ after an intended change; a
# removal must be named in CHANGELOG.md's Unreleased section first.
api:
	go run ./internal/release api -write
