// Variants of zipline's options that older revisions do not have:
// cmd/abbench builds with -tags anyrev, which leaves them out, so that a
// revision from before them builds too.

//go:build !anyrev

package bench

import "github.com/ziplinekv/zipline"

func init() {
	registerZiplineVariant("zipline-onelane", "BulkThreshold: -1",
		"every request on the shared connection, large values too (no bulk lane)",
		func(o *zipline.Options) { o.BulkThreshold = -1 })
	registerZiplineVariant("zipline-solo", "SoloConns: 7",
		"up to 7 more connections, each lent to one caller at a time while callers are few (solo connections, off by default)",
		func(o *zipline.Options) { o.SoloConns = 7 })
}

// registerZiplineVariant registers zipline with one option changed from its
// default: set changes it, option names it as written in Options, and why
// says what the variant does differently.
func registerZiplineVariant(name, option, why string, set func(*zipline.Options)) {
	Register(Factory{
		Name:  name,
		Desc:  "zipline.New(Options{Addr, " + option + "}): " + why,
		Order: orderZipline,
		New: func(addr string, _ int) (Client, error) {
			opts := zipline.Options{Addr: addr}
			set(&opts)
			c, err := zipline.New(opts)
			if err != nil {
				return nil, err
			}
			return ziplineClient{c}, nil
		},
	})
}
