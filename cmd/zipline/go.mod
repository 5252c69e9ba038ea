module github.com/ziplinekv/zipline/cmd/zipline

go 1.26.0

require (
	github.com/ziplinekv/zipline v0.1.0
	github.com/ziplinekv/zipline/testbed v0.1.0
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
)
