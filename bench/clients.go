// Package bench holds the client-comparison benchmarks for zipline. It is a
// separate module (see go.mod) so that the peer clients it measures never
// become dependencies of zipline itself.
//
// Each peer has one adapter file (rueidis.go, goredis.go, redigo.go,
// redispipe.go, radix.go, glide.go, zipline.go) that registers a Factory in
// init. cmd/clientbench and clients_test.go drive the adapters through the
// Client interface. The peers with a cluster client have a second file
// (cluster_*.go) that registers a ClusterFactory, which cmd/clusterbench and
// cmd/failoverbench drive through ClusterClient.
package bench

import (
	"context"
	"fmt"
	"slices"
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
	// Batch, when above 1, makes each operation a pipeline of Batch
	// commands (the client is then a Batcher), sent from Conc/Batch
	// goroutines, so that as many commands are in flight as with one
	// command from each of Conc goroutines. Cells count commands.
	Batch int
}

// A Batcher sends several commands as one pipeline and waits for all
// their replies: the form for a caller that has several at once.
type Batcher interface {
	// GetBatch reads keys and returns the total length of the values.
	GetBatch(ctx context.Context, keys []string) (int, error)
	// SetBatch writes val under each of keys.
	SetBatch(ctx context.Context, keys []string, val []byte) error
}

var registry = adapters[Factory]{}

// Register adds f; adapters call it from init.
func Register(f Factory) { registry.add(f) }

// Lookup returns the factory called name.
func Lookup(name string) (Factory, bool) {
	f, ok := registry[name]
	return f, ok
}

// All returns every registered factory, zipline first.
func All() []Factory { return registry.all() }

// Names lists the registered client names in All order.
func Names() string { return registry.names() }

// Pick returns the factories a -clients flag names: a comma-separated
// list, or every one for "" and "all" but the batch forms (Factory.Batch),
// which run only when named: they are measured beside the server's
// pipelined ceiling at many callers, not in the one-command table.
func Pick(list string) ([]Factory, error) {
	fs, err := registry.pick(list)
	if list == "" || list == "all" {
		fs = slices.DeleteFunc(fs, func(f Factory) bool { return f.Batch > 1 })
	}
	return fs, err
}

func (f Factory) key() (string, int) { return f.Name, f.Order }

// adapters is a registry of one kind of factory, by name.
type adapters[F interface{ key() (string, int) }] map[string]F

func (r adapters[F]) add(f F) {
	name, _ := f.key()
	if _, dup := r[name]; dup {
		panic("bench: duplicate client " + name)
	}
	r[name] = f
}

// all returns the factories by order, then name.
func (r adapters[F]) all() []F {
	out := make([]F, 0, len(r))
	for _, f := range r {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		ni, oi := out[i].key()
		nj, oj := out[j].key()
		if oi != oj {
			return oi < oj
		}
		return ni < nj
	})
	return out
}

// pick returns the factories named in list (comma-separated), or every
// one for "" and "all".
func (r adapters[F]) pick(list string) ([]F, error) {
	if list == "" || list == "all" {
		return r.all(), nil
	}
	var out []F
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		f, ok := r[name]
		if !ok {
			hint := ""
			if name == "glide" {
				hint = " (build with -tags glide; it needs cgo and gcc)"
			}
			return nil, fmt.Errorf("unknown client %q%s; built in: %s", name, hint, r.names())
		}
		out = append(out, f)
	}
	return out, nil
}

// names lists the names in all's order, comma-separated.
func (r adapters[F]) names() string {
	var b strings.Builder
	for i, f := range r.all() {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := f.key()
		b.WriteString(name)
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
