//go:build !clibs || !cgo

package codecref

import "errors"

// Available reports whether the C libraries are linked in (build tag
// clibs, with cgo).
const Available = false

var errNoC = errors.New("codecref: built without the C libraries: build with -tags clibs (cgo, libzstd-dev and liblz4-dev)")

// Versions returns the linked libraries' versions.
func Versions() string { return "none (built without -tags clibs)" }

// Zstd stands for libzstd's contexts; without the C libraries NewZstd fails.
type Zstd struct{}

// NewZstd fails: the C libraries are not linked in.
func NewZstd(level int) (*Zstd, error) { return nil, errNoC }

// Close does nothing.
func (z *Zstd) Close() {}

// ZstdBound is ZSTD_compressBound (its formula, without the library).
func ZstdBound(n int) int { return n + n>>8 + 64 }

// Compress fails: the C libraries are not linked in.
func (z *Zstd) Compress(dst, src []byte) ([]byte, error) { return dst, errNoC }

// CompressGlide fails: the C libraries are not linked in.
func (z *Zstd) CompressGlide(dst, src []byte) ([]byte, error) { return dst, errNoC }

// Decompress fails: the C libraries are not linked in.
func (z *Zstd) Decompress(dst, frame []byte) ([]byte, error) { return dst, errNoC }

// LZ4Bound is LZ4_compressBound's formula.
func LZ4Bound(n int) int { return n + n/255 + 16 }

// LZ4Compress fails: the C libraries are not linked in.
func LZ4Compress(dst, src []byte) ([]byte, error) { return dst, errNoC }

// LZ4Decompress fails: the C libraries are not linked in.
func LZ4Decompress(dst, block []byte) ([]byte, error) { return dst, errNoC }
