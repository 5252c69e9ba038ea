module github.com/ziplinekv/zipline/cmd/zipline

go 1.26.0

replace (
	github.com/ziplinekv/zipline => ../../
	github.com/ziplinekv/zipline/testbed => ../../testbed
)

require (
	github.com/ziplinekv/zipline v0.0.0-00010101000000-000000000000
	github.com/ziplinekv/zipline/testbed v0.0.0-00010101000000-000000000000
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
)
