module github.com/ziplinekv/zipline

go 1.26.0

require (
	github.com/klauspost/compress v1.20.3
	github.com/pierrec/lz4/v4 v4.1.33
	go.uber.org/goleak v1.3.0
)

require github.com/ziplinekv/zipline/testbed v0.1.0
