// Package layouts measures what the layout package saves: the memory
// table of the me-redis article ("Zip'em ALL!", 100,000 pairs per cell) and
// the speed of a namespace's operations against plain commands.
//
// # Memory
//
// A cell is one value class stored under one key family in one layout. The
// runner FLUSHALLs the server, reads used_memory, writes the class's values
// for Pairs keys (plain MSET/INCR for the baseline, a layout.Store's MSet or
// queued IncrBy otherwise), waits until the server's incremental rehashing
// is over, reads used_memory again and reads a sample back. The figure is
// the difference, excluding client query and output buffers
// (mem_clients_normal), which depend on batch sizes rather than on the data.
// On a given server build the figures are deterministic.
//
// Value classes (see Classes) follow the article: counters written by INCR,
// random 9-digit integers, short English strings, HTML fragments of about
// 100, 500, 1,000 and 4,000 bytes, and JSON objects (real user records of
// random.json, embedded in package corpus, and the corpus generator's
// json-98 and json-461). Layouts (see Layouts) go from plain keys to zipped keys, hash
// buckets, and buckets with zipped keys and zstd, plain or with a trained
// dictionary.
//
// # Speed
//
// The speed runner drives a layout.Store's Get, Set, MGet and MSet, alone
// and queued in batches, from many goroutines, against GET, SET, MGET and
// MSET through the same zipline.Client, and reports the median of several
// short runs. See SpeedConfig.
//
// # Reports
//
// WriteMarkdown renders the results, the comparison with the article's
// table and the bar; cmd/zipline "bench layouts" runs it all.
package layouts
