// Package codec compresses values the way Valkey GLIDE's transparent
// compression does, byte-compatible in both directions: what GLIDE writes,
// Decode reads, and what Encode writes, GLIDE clients read. It knows nothing
// about Redis: bytes in, bytes out. The client package runs it on each value
// a SET-like command writes and each value a GET-like command reads.
//
// # Why
//
// Values such as JSON documents of a few KiB shrink by a third (LZ4) to a
// half (zstd), and Valkey's memory shrinks with them. Using GLIDE's envelope,
// rather than one of our own, lets zipline and GLIDE clients share a
// keyspace, and lets a value that was never compressed be read like any
// other.
//
// # The envelope
//
// A compressed value is a 5-byte header and a backend payload:
//
//	offset 0-2  magic      00 01 02
//	offset 3    version    00 (written; ignored on read, as GLIDE does)
//	offset 4    backend    01 zstd | 02 lz4 (other ids are unknown)
//	offset 5-   payload
//	    zstd: one standard zstd frame (GLIDE's have no content size and no
//	          checksum; ours have a content size); several frames are accepted
//	    lz4:  u32le(plaintext length) + one raw LZ4 block, not an LZ4 frame
//
// # Rules
//
// Encode compresses a value of at least the minimum size (64 bytes by default,
// inclusive) unless it already starts with a header with a known id, and
// keeps the compressed form only if it is shorter than the value. Otherwise
// it stores the value as is. (GLIDE skips only a header with its own id;
// Encode skips both ids, because Decode reads both.)
//
// Decode expands a value only when the magic matches, the id is known and
// the payload decodes cleanly; anything else, including a corrupt payload or
// an unknown id, is returned as stored, so plain data written by any client
// still reads. Its one error is ErrTooLarge, for a plaintext beyond the
// maximum size (512 MiB by default), found before allocating when the size
// is declared. Decode reads both backends whatever the Codec writes.
//
// GLIDE's versions differ on corrupt LZ4 sizes; Decode follows the stricter,
// GLIDE 2.6.0: the block must decode to exactly the declared length.
//
// # Levels
//
// Levels use GLIDE's numbering: zstd -131072..22 (default 3), LZ4 -128..12
// (default 0). The pure-Go zstd encoder has four speeds, so zstd levels map
// onto them in bands; LZ4 levels map onto pierrec/lz4's fast, accelerated
// and high-compression modes. See WithLevel for the table.
//
// # Concurrency and memory
//
// A Codec is safe for concurrent use and meant to be shared. It holds all of
// its configuration; what the package shares between Codecs is only a cache of
// stateless workers, keyed by level and limit. zstd encoders
// are created on first use and shared by every Codec of the same level band,
// the decoder for the default limit by every Codec with that limit; a Codec
// with another limit has a decoder of its own. Each has GOMAXPROCS workers,
// built together on first use, and a call waits for a free one. A zstd
// encoder worker holds about 1.3 MiB at the default level, 12 MiB at levels
// 6-9 and 43 MiB at 10-22, so those levels have at most 8 and 4 workers; each
// also keeps a window buffer once it has seen a value over 128 KiB. LZ4
// compressors (16-256 KiB of tables) are pooled. Encode and Decode append to
// the caller's slice and, once warm and given a slice with enough capacity,
// allocate nothing.
package codec
