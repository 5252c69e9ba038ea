// Package bench holds the client-comparison benchmarks for zipline. It is a
// separate module (see go.mod) so that the peer clients it measures never
// become dependencies of zipline itself.
//
// Each peer has one adapter file (rueidis.go, goredis.go, redigo.go,
// redispipe.go, radix.go, glide.go, zipline.go) that registers a Factory in
// init. cmd/clientbench and clients_test.go drive the adapters through the
// Client interface.
package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unsafe"
)

// Client is the operation set every adapter implements. Adapters use the
// client's idiomatic fastest call for a single command and must be safe for
// concurrent use by many goroutines.
type Client interface {
	// Get reads key and returns the length of the value it got back. The
	// value must be materialised the way a caller of that client would see
	// it (string or []byte), so that every client pays for its reply.
	Get(ctx context.Context, key string) (int, error)
	// Set writes val under key. val must not be modified or retained.
	Set(ctx context.Context, key string, val []byte) error
	Close() error
}

// Factory builds a client for addr. conc is the number of goroutines that
// will share it; only pool-per-request clients (redigo) use it.
type Factory struct {
	Name string
	Desc string // one line: API and options used
	New  func(addr string, conc int) (Client, error)
	// Order sorts factories in listings: zipline first, then peers.
	Order int
}

var registry = map[string]Factory{}

// Register adds f; adapters call it from init.
func Register(f Factory) {
	if _, dup := registry[f.Name]; dup {
		panic("bench: duplicate client " + f.Name)
	}
	registry[f.Name] = f
}

// Lookup returns the factory called name.
func Lookup(name string) (Factory, bool) {
	f, ok := registry[name]
	return f, ok
}

// All returns every registered factory, zipline first.
func All() []Factory {
	out := make([]Factory, 0, len(registry))
	for _, f := range registry {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Names lists the registered client names in All order.
func Names() string {
	var b strings.Builder
	for i, f := range All() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Name)
	}
	return b.String()
}

// Ordering of the listing.
const (
	orderZipline = iota
	orderPeer
)

// bstr views b as a string without copying. The benchmark value is never
// modified while a client holds it, and clients whose API takes a string
// (radix, glide) would otherwise be charged for a conversion that a caller
// holding a string would not make.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// unexpected reports a reply of the wrong type.
func unexpected(client string, v any) error {
	return fmt.Errorf("%s: unexpected reply %T", client, v)
}
