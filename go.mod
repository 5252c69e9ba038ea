module github.com/ziplinekv/zipline

go 1.26.0

replace github.com/ziplinekv/zipline/testbed => ./testbed

require (
	github.com/klauspost/compress v1.20.3
	github.com/pierrec/lz4/v4 v4.1.33
	go.uber.org/goleak v1.3.0
)

require github.com/ziplinekv/zipline/testbed v0.0.0-00010101000000-000000000000
