// Package codec compresses values the way Valkey GLIDE's transparent
// compression does, byte-compatible in both directions: what GLIDE writes,
// Decode reads, and what Encode writes with the Zstd and LZ4 backends, GLIDE
// clients read. It adds one backend of its own, zstd with a trained
// dictionary, for small values. It knows nothing about Redis: bytes in,
// bytes out. The client package runs it on each value a SET-like command
// writes and each value a GET-like command reads.
//
// # Why
//
// Values such as JSON documents of a few KiB shrink by a third (LZ4) to a
// half (zstd), and Valkey's memory shrinks with them. Using GLIDE's envelope,
// rather than one of our own, lets zipline and GLIDE clients share a
// keyspace, and lets a value that was never compressed be read like any
// other. Values of a few hundred bytes barely shrink on their own, but
// shrink to about a third with a dictionary trained on their kind (see
// Dictionaries).
//
// # The envelope
//
// A compressed value is a 5-byte header and a backend payload:
//
//	offset 0-2  magic      00 01 02
//	offset 3    version    00 (written; ignored on read, as GLIDE does)
//	offset 4    backend    01 zstd | 02 lz4 | 81 zstd with a dictionary
//	                       (other ids are unknown)
//	offset 5-   payload
//	    zstd:      one standard zstd frame (GLIDE's have no content size and
//	               no checksum; ours have a content size); several frames
//	               are accepted
//	    lz4:       u32le(plaintext length) + one raw LZ4 block, not an LZ4 frame
//	    zstd-dict: one standard zstd frame, with a content size and no
//	               checksum, whose header names its dictionary by ID: what
//	               "zstd -D" and klauspost's WithEncoderDict write
//
// Ids 01 and 02 are GLIDE's. Ids 80 and above are zipline's extensions:
// GLIDE treats an unknown id as plain bytes and returns the value as
// stored, so a GLIDE client reading a ZstdDict value gets the stored bytes,
// header included, never an error and never garbage. Use ZstdDict only for
// keys that GLIDE clients do not read, or that they treat as opaque.
//
// # Rules
//
// Encode compresses a value of at least the minimum size (64 bytes by default,
// inclusive) unless it already starts with a header with a known id, and
// keeps the compressed form only if it is shorter than the value. Otherwise
// it stores the value as is. (GLIDE skips only a header with its own id;
// Encode skips every known id, because a Codec may read any of them.)
//
// Decode expands a value only when the magic matches, the id is known and
// the payload decodes cleanly; anything else, including a corrupt payload or
// an unknown id, is returned as stored, so plain data written by any client
// still reads. Its one error is ErrTooLarge, for a plaintext beyond the
// maximum size (512 MiB by default), found before allocating when the size
// is declared. Decode reads Zstd and LZ4 whatever the Codec writes, and
// ZstdDict when it holds the dictionary the value names.
//
// GLIDE's versions differ on corrupt LZ4 sizes; Decode follows the stricter,
// GLIDE 2.6.0: the block must decode to exactly the declared length.
//
// # Levels
//
// Levels use GLIDE's numbering: zstd (with or without a dictionary)
// -131072..22 (default 3), LZ4 -128..12 (default 0). The pure-Go zstd
// encoder has four speeds, so zstd levels map onto them in bands; LZ4 levels
// map onto pierrec/lz4's fast, accelerated and high-compression modes. See
// WithLevel for the table.
//
// # Dictionaries
//
// A zstd dictionary holds content typical of the values (for JSON, the keys
// and common values) and entropy tables, so that even a short value has
// something to refer to. TrainDictionary builds one from samples;
// dictionaries from "zstd --train" work as well. A Codec with backend
// ZstdDict needs one (WithDictionary) and writes id 0x81; any Codec given
// the dictionary reads those values, and any other returns them as stored.
//
// Mean stored/original size, header included, at level 3, dictionary of
// 16 KiB trained on 1000 other values of the same kind (TestDictRatio;
// "random" is 500 records of random.json (testbed/corpus), trained on the
// other 500):
//
//	values              zstd   zstd+dict   lz4
//	JSON records 100 B  0.995  0.465       1.000
//	JSON records 300 B  0.896  0.349       1.000
//	JSON records 500 B  0.653  0.307       0.865
//	JSON records 1 KB   0.471  0.264       0.642
//	random.json (460 B) 0.723  0.270       0.850
//
// The application owns the dictionary: values name it by its 32-bit ID, and
// cannot be read without it. Store it with the configuration, not only in
// the keyspace, and keep it as long as values written with it exist. A
// dictionary fits one family of values; train one per family, and retrain
// (rewriting the values) when their shape changes. On a 300-byte record at
// the default level, encoding with a dictionary takes about 1.6 times as
// long as without (7 µs against 4.3 µs on a 2-core AMD EPYC VM), and
// decoding a fifth as long (0.35 µs against 1.7 µs), because the entropy
// tables come with the dictionary (BenchmarkDictEncode, BenchmarkDictDecode).
//
// # Concurrency and memory
//
// A Codec is safe for concurrent use and meant to be shared. It holds all of
// its configuration; what the package shares between Codecs is only a cache of
// stateless workers, keyed by level. zstd encoders are created on first use
// and shared by every Codec of the same level band, and one zstd decoder by
// every Codec without a dictionary, for values of up to 256 KiB. Each has
// GOMAXPROCS workers, built together on first use, and a call waits for a
// free one. A larger zstd value is decoded by a worker from a pool of the
// Codec's own, reset before it goes back, so that no worker keeps a large
// value's input or plaintext. A zstd encoder worker holds about 1.3 MiB at
// the default level, 12 MiB at levels 6-9 and 43 MiB at 10-22, so those
// levels have at most 8 and 4 workers; each also keeps a window buffer once
// it has seen a value over 128 KiB. LZ4 compressors (16-256 KiB of tables)
// are pooled. Encode and Decode append to the caller's slice and, once warm
// and given a slice with enough capacity, allocate nothing.
//
// Decoding holds at most the maximum decompressed size plus 128 KiB (or
// 1 MiB, if that is more) for a value's plaintext, whatever the value: see
// Codec.Decode.
//
// Workers that use a dictionary are owned by the Codec, not shared, and go
// away with it: the dictionary's tables are built into them. A Codec with a
// dictionary has its own zstd decoders (about 0.1 MiB each), and with backend
// ZstdDict its own encoder, whose workers (as many as above) hold about
// 1.2 MiB each at levels below 0 and 1-2, 3.2 MiB at 0 and 3-5, 9 MiB at
// 6-9 and 69 MiB at 10-22, with a 16 KiB dictionary: tables built from the
// dictionary, and a history buffer of the window (512 KiB, or twice the
// dictionary) plus a block. So create one Codec per dictionary and share it.
package codec
