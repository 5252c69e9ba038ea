//go:build clibs && cgo

package codecref

/*
#cgo LDFLAGS: -lzstd -llz4
#include <stdlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#include <lz4.h>

// The streaming context's parameters: the level, and no content size
// (GLIDE's frames carry none; a streamed frame would anyway).
static size_t zr_noSize(ZSTD_CCtx *c, int level) {
	size_t r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
	if (ZSTD_isError(r)) return r;
	return ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
}

// As GLIDE writes (through the zstd crate's streaming encoder): the input
// is passed with ZSTD_e_continue, then the frame ended with ZSTD_e_end, so
// libzstd never learns the size: no content size, and the level's window
// (2 MiB at level 3). Returns the frame size or an error code.
static size_t zr_stream(ZSTD_CCtx *c, void *dst, size_t cap, const void *src, size_t n) {
	size_t r = ZSTD_CCtx_reset(c, ZSTD_reset_session_only);
	if (ZSTD_isError(r)) return r;
	ZSTD_outBuffer out = {dst, cap, 0};
	ZSTD_inBuffer in = {src, n, 0};
	while (in.pos < in.size) {
		r = ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue);
		if (ZSTD_isError(r)) return r;
		if (out.pos == out.size) return (size_t)-ZSTD_error_dstSize_tooSmall;
	}
	ZSTD_inBuffer end = {NULL, 0, 0};
	do {
		r = ZSTD_compressStream2(c, &out, &end, ZSTD_e_end);
		if (ZSTD_isError(r)) return r;
		if (r != 0 && out.pos == out.size) return (size_t)-ZSTD_error_dstSize_tooSmall;
	} while (r != 0);
	return out.pos;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Available reports whether the C libraries are linked in (build tag
// clibs, with cgo).
const Available = true

// Versions returns the linked libraries' versions.
func Versions() string {
	return fmt.Sprintf("libzstd %s, liblz4 %s", C.GoString(C.ZSTD_versionString()), C.GoString(C.LZ4_versionString()))
}

// Zstd holds one libzstd compression and one decompression context, reused
// by every call, as a C program that cares about speed does. Not safe for
// concurrent use.
type Zstd struct {
	level  int
	cctx   *C.ZSTD_CCtx // ZSTD_compressCCtx: content size in the header
	nosize *C.ZSTD_CCtx // streaming, without content size, as GLIDE writes
	dctx   *C.ZSTD_DCtx
}

// NewZstd returns contexts for level.
func NewZstd(level int) (*Zstd, error) {
	z := &Zstd{level: level, cctx: C.ZSTD_createCCtx(), nosize: C.ZSTD_createCCtx(), dctx: C.ZSTD_createDCtx()}
	if z.cctx == nil || z.nosize == nil || z.dctx == nil {
		z.Close()
		return nil, errors.New("codecref: ZSTD_create*Ctx failed")
	}
	if r := C.zr_noSize(z.nosize, C.int(level)); C.ZSTD_isError(r) != 0 {
		z.Close()
		return nil, zstdErr(r)
	}
	return z, nil
}

// Close frees the contexts.
func (z *Zstd) Close() {
	C.ZSTD_freeCCtx(z.cctx)
	C.ZSTD_freeCCtx(z.nosize)
	C.ZSTD_freeDCtx(z.dctx)
	*z = Zstd{}
}

func zstdErr(r C.size_t) error {
	return fmt.Errorf("libzstd: %s", C.GoString(C.ZSTD_getErrorName(r)))
}

// ZstdBound is ZSTD_compressBound.
func ZstdBound(n int) int { return int(C.ZSTD_compressBound(C.size_t(n))) }

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// Compress appends the frame ZSTD_compressCCtx writes for src (with its
// content size). dst must have room for ZstdBound(len(src)) more bytes, or
// it is grown first.
func (z *Zstd) Compress(dst, src []byte) ([]byte, error) {
	dst = grow(dst, ZstdBound(len(src)))
	out := dst[len(dst):cap(dst)]
	r := C.ZSTD_compressCCtx(z.cctx, ptr(out), C.size_t(len(out)), ptr(src), C.size_t(len(src)), C.int(z.level))
	runtime.KeepAlive(src)
	if C.ZSTD_isError(r) != 0 {
		return dst, zstdErr(r)
	}
	return dst[:len(dst)+int(r)], nil
}

// CompressGlide appends the frame GLIDE writes for src: libzstd's streaming
// compression, which is never told the size (ZSTD_compressStream2 with
// ZSTD_e_continue, then ZSTD_e_end), so the frame has no content size and
// the level's full window (2 MiB at level 3), and no checksum. On GLIDE's
// own vector (testdata/glide/zstd_1.bin) it writes the same bytes.
func (z *Zstd) CompressGlide(dst, src []byte) ([]byte, error) {
	dst = grow(dst, ZstdBound(len(src)))
	out := dst[len(dst):cap(dst)]
	r := C.zr_stream(z.nosize, ptr(out), C.size_t(len(out)), ptr(src), C.size_t(len(src)))
	runtime.KeepAlive(src)
	if C.ZSTD_isError(r) != 0 {
		return dst, zstdErr(r)
	}
	return dst[:len(dst)+int(r)], nil
}

// Decompress appends the plaintext of frame to dst with ZSTD_decompressDCtx,
// into dst's spare capacity, which must hold it.
func (z *Zstd) Decompress(dst, frame []byte) ([]byte, error) {
	out := dst[len(dst):cap(dst)]
	r := C.ZSTD_decompressDCtx(z.dctx, ptr(out), C.size_t(len(out)), ptr(frame), C.size_t(len(frame)))
	runtime.KeepAlive(frame)
	if C.ZSTD_isError(r) != 0 {
		return dst, zstdErr(r)
	}
	return dst[:len(dst)+int(r)], nil
}

// LZ4Bound is LZ4_compressBound.
func LZ4Bound(n int) int { return int(C.LZ4_compressBound(C.int(n))) }

// LZ4Compress appends the raw block LZ4_compress_default writes for src.
func LZ4Compress(dst, src []byte) ([]byte, error) {
	dst = grow(dst, LZ4Bound(len(src)))
	out := dst[len(dst):cap(dst)]
	n := C.LZ4_compress_default((*C.char)(ptr(src)), (*C.char)(ptr(out)), C.int(len(src)), C.int(len(out)))
	runtime.KeepAlive(src)
	if n <= 0 {
		return dst, errors.New("liblz4: LZ4_compress_default failed")
	}
	return dst[:len(dst)+int(n)], nil
}

// LZ4Decompress appends the plaintext of a raw block with
// LZ4_decompress_safe, into dst's spare capacity, which must hold it.
func LZ4Decompress(dst, block []byte) ([]byte, error) {
	out := dst[len(dst):cap(dst)]
	n := C.LZ4_decompress_safe((*C.char)(ptr(block)), (*C.char)(ptr(out)), C.int(len(block)), C.int(len(out)))
	runtime.KeepAlive(block)
	if n < 0 {
		return dst, errors.New("liblz4: LZ4_decompress_safe failed")
	}
	return dst[:len(dst)+int(n)], nil
}
