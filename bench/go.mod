module github.com/ziplinekv/zipline/bench

go 1.26.0

replace github.com/ziplinekv/zipline => ../

require (
	github.com/go-redis/cache/v9 v9.0.0
	github.com/gomodule/redigo v1.9.3
	github.com/joomcode/redispipe v0.9.8
	github.com/mediocregopher/radix/v4 v4.1.4
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	github.com/valkey-io/valkey-glide/go/v2 v2.5.3
	github.com/ziplinekv/zipline v0.0.0-00010101000000-000000000000
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/joomcode/errorx v1.0.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/tilinna/clock v1.0.2 // indirect
	github.com/vmihailenco/go-tinylfu v0.2.2 // indirect
	github.com/vmihailenco/msgpack/v5 v5.3.4 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sync v0.1.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
