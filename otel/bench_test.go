package ziplineotel_test

import (
	"context"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
	ziplineotel "github.com/ziplinekv/zipline/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkGet measures what the hook adds to a GET: run with
// -bench Get -benchmem and compare plain with traced (every span sampled,
// then dropped) and with the duration histogram only.
func BenchmarkGet(b *testing.B) {
	srv := testkit.NewServer(b, testkit.Config{})
	tp := sdktrace.NewTracerProvider() // samples everything, exports nothing
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	for _, bc := range []struct {
		name string
		otel []ziplineotel.Option
	}{
		{"plain", nil},
		{"traced", []ziplineotel.Option{ziplineotel.WithTracerProvider(tp), ziplineotel.WithMeterProvider(mp)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := zipline.Options{Addr: srv.Addr, Logger: quiet}
			if bc.otel != nil {
				if err := ziplineotel.Instrument(&opts, bc.otel...); err != nil {
					b.Fatal(err)
				}
			}
			c, err := zipline.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if err := c.Set(ctx, "k", []byte("v")); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Get(ctx, "k"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
