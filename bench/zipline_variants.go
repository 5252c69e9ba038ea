// Variants of zipline's options that older revisions do not have:
// cmd/abbench builds with -tags anyrev, which leaves them out, so that a
// revision from before them builds too.

//go:build !anyrev

package bench

import "github.com/ziplinekv/zipline"

func init() {
	Register(Factory{
		Name:  "zipline-onelane",
		Desc:  "zipline.New(Options{Addr, BulkThreshold: -1}): every request on the shared connection, large values too (no bulk lane)",
		Order: orderZipline,
		New: func(addr string, _ int) (Client, error) {
			c, err := zipline.New(zipline.Options{Addr: addr, BulkThreshold: -1})
			if err != nil {
				return nil, err
			}
			return ziplineClient{c}, nil
		},
	})
	Register(Factory{
		Name:  "zipline-nosolo",
		Desc:  "zipline.New(Options{Addr, SoloConns: -1}): every caller on the shared pipelined connection, however few (no solo connections)",
		Order: orderZipline,
		New: func(addr string, _ int) (Client, error) {
			c, err := zipline.New(zipline.Options{Addr: addr, SoloConns: -1})
			if err != nil {
				return nil, err
			}
			return ziplineClient{c}, nil
		},
	})
}
