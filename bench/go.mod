module github.com/ziplinekv/zipline/bench

go 1.26.0

require (
	github.com/centrifugal/centrifuge v0.38.0
	github.com/go-redis/cache/v9 v9.0.0
	github.com/gomodule/redigo v1.9.3
	github.com/gorilla/websocket v1.5.3
	github.com/joomcode/redispipe v0.9.8
	github.com/lxzan/gws v1.9.1
	github.com/mediocregopher/radix/v4 v4.1.4
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	github.com/valkey-io/valkey-glide/go/v2 v2.5.3
	github.com/ziplinekv/zipline v0.1.0
	github.com/ziplinekv/zipline/cmd/zipline v0.1.0
	github.com/ziplinekv/zipline/testbed v0.1.0
)

require (
	github.com/FZambia/eagle v0.2.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/centrifugal/protocol v0.17.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dolthub/maphash v0.1.0 // indirect
	github.com/gammazero/deque v0.2.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/joomcode/errorx v1.0.3 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/maypok86/otter v1.2.4 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/planetscale/vtprotobuf v0.6.0 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.66.1 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	github.com/quagmt/udecimal v1.9.0 // indirect
	github.com/segmentio/asm v1.2.0 // indirect
	github.com/segmentio/encoding v0.5.3 // indirect
	github.com/shadowspore/fossil-delta v0.0.0-20241213113458-1d797d70cbe3 // indirect
	github.com/tilinna/clock v1.0.2 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/vmihailenco/go-tinylfu v0.2.2 // indirect
	github.com/vmihailenco/msgpack/v5 v5.3.4 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	golang.org/x/sync v0.18.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)
