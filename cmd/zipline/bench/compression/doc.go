// Package compression measures what transparent value compression costs and
// saves, the way Valkey GLIDE's compression blog did, so zipline can be set
// beside GLIDE's published table and beside GLIDE Go itself.
//
// Two measurements, both client-agnostic (a Client is anything that can
// SET and GET batches of keys; Zipline gives the zipline variants, and
// bench/cmd/compbench adds GLIDE Go under the glide build tag):
//
//   - MeasureMemory stores 10,000 values of each corpus class per variant
//     (no compression, zstd, LZ4) and reads the server's used_memory before
//     and after, with FLUSHALL between runs and the client closed before
//     the second reading, and checks that values read back unchanged.
//   - RunMatrix runs GLIDE's throughput matrix, goroutines {1, 2, 4, 8, 10,
//     25, 100, 1000} × batch {1, 5, 10, 20, 50}, a SET phase then a GET
//     phase per cell, every variant back to back within a cell so ratios
//     compare neighbouring measurements. A batch of one is a plain SET/GET,
//     larger batches a pipeline.
//
// Report writes the markdown (tables, the points that miss issue 3's bar,
// GLIDE's published figures beside ours) and WriteCharts the SVG charts (a
// bar chart of memory saved per class, heatmaps of TPS ratios, drawn by
// package chart). Its one front door is the bench module's cmd/compbench
// (zipline alone without cgo; with -tags glide, GLIDE Go in the same run);
// the demo runs a small part of it; the package is outside internal/ so that the bench module
// can import it.
//
// Both measurements need a real server. They read it through a zipline
// client of their own, without compression, for INFO, FLUSHALL and bulk
// STRLEN/DEL, so nothing they do goes through a client under test.
package compression
