package codecref

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/ziplinekv/zipline/codec"
)

// Sides of a cell.
const (
	SideZipline = "zipline"
	SideC       = "C"
)

// Ops, in report order.
var Ops = []string{"zstd encode", "zstd decode", "zstd decode GLIDE", "lz4 encode", "lz4 decode"}

// OpNotes says what each op runs on both sides.
var OpNotes = map[string]string{
	"zstd encode":       "zipline: codec.New(codec.Zstd).Encode (level 3, header + frame with content size); C: ZSTD_compressCCtx level 3, reused context",
	"zstd decode":       "the value zipline wrote (its frame has a content size); zipline: Codec.Decode of the stored value; C: ZSTD_decompressDCtx of its frame, reused context",
	"zstd decode GLIDE": "a value as GLIDE writes it: libzstd level 3 streaming, never told the size (no content size, 2 MiB window, no checksum; byte for byte GLIDE's vector zstd_1), behind the header; same calls",
	"lz4 encode":        "zipline: codec.New(codec.LZ4).Encode (u32 length + raw block); C: LZ4_compress_default",
	"lz4 decode":        "the value zipline wrote; zipline: Codec.Decode; C: LZ4_decompress_safe of its block",
}

// Sizes are the stored sizes of one document, header included, as each
// side stores it: compressed only if that is shorter, as GLIDE and zipline
// both do.
type Sizes struct {
	Doc                    string
	Plain                  int
	ZstdZipline, ZstdC     int // C: GLIDE's frame (no content size) + 5
	ZstdCWithSize          int // ZSTD_compressCCtx's frame + 5
	LZ4Zipline, LZ4C       int
	LZ4Same, ZstdGlideRead bool // zipline's LZ4 bytes equal liblz4's; zipline reads GLIDE's zstd value
}

// Measurement is one side of one cell in one round.
type Measurement struct {
	Round      int
	Doc, Op    string
	Side       string
	Goroutines int
	N          int64   // operations measured
	CPUNs      float64 // process CPU time per operation
	WallNs     float64 // elapsed time per operation
}

// Config says what to measure.
type Config struct {
	Docs       []Doc
	Ops        []string
	Rounds     int
	Time       time.Duration // per cell and side, per round
	Goroutines int           // 1: one goroutine; more: each side runs that many at once
	Round0     int           // number of the first round, for reports
	// Log, if set, gets each measurement as it is taken.
	Log func(Measurement)
}

// cell is one (document, op): a factory of workers per side.
type cell struct {
	doc, op string
	sides   [2]func() (op func() error, done func())
}

// Setup checks both sides on every document (each side's output reads
// back on the other, where the formats allow) and returns the sizes.
func Setup(docs []Doc) ([]Sizes, error) {
	_, sizes, err := cells(docs)
	return sizes, err
}

func cells(docs []Doc) ([]cell, []Sizes, error) {
	if !Available {
		return nil, nil, errNoCLibs()
	}
	zc, err := codec.New(codec.Zstd)
	if err != nil {
		return nil, nil, err
	}
	lc, err := codec.New(codec.LZ4)
	if err != nil {
		return nil, nil, err
	}
	cz, err := NewZstd(codec.DefaultZstdLevel)
	if err != nil {
		return nil, nil, err
	}
	defer cz.Close()
	var out []cell
	var sizes []Sizes
	for _, d := range docs {
		doc := d.Data
		zStored, zok := zc.Encode(nil, doc)
		cFrame, err := cz.Compress(nil, doc)
		if err != nil {
			return nil, nil, err
		}
		gFrame, err := cz.CompressGlide(nil, doc)
		if err != nil {
			return nil, nil, err
		}
		gStored := append([]byte{0, 1, 2, 0, byte(codec.Zstd)}, gFrame...)
		lStored, lok := lc.Encode(nil, doc)
		cBlock, err := LZ4Compress(nil, doc)
		if err != nil {
			return nil, nil, err
		}
		stored := func(n int) int { return min(n, len(doc)) }
		s := Sizes{Doc: d.Name, Plain: len(doc), ZstdZipline: len(zStored), ZstdC: stored(5 + len(gFrame)),
			ZstdCWithSize: stored(5 + len(cFrame)), LZ4Zipline: len(lStored), LZ4C: stored(9 + len(cBlock))}
		s.LZ4Same = lok && bytes.Equal(lStored[9:], cBlock)

		// Cross-checks: what one side writes, the other reads.
		check := func(what string, got []byte, err error) error {
			if err != nil || !bytes.Equal(got, doc) {
				return fmt.Errorf("codecref: %s: %s does not read back (%v)", d.Name, what, err)
			}
			return nil
		}
		got, err := zc.Decode(nil, gStored)
		if err := check("GLIDE's zstd value through codec.Decode", got, err); err != nil {
			return nil, nil, err
		}
		s.ZstdGlideRead = true
		if zok {
			got, err = cz.Decompress(make([]byte, 0, len(doc)), zStored[5:])
			if err := check("zipline's zstd frame through libzstd", got, err); err != nil {
				return nil, nil, err
			}
		}
		if lok {
			got, err = LZ4Decompress(make([]byte, 0, len(doc)), lStored[9:])
			if err := check("zipline's LZ4 block through liblz4", got, err); err != nil {
				return nil, nil, err
			}
		}
		lcStored := append([]byte{0, 1, 2, 0, byte(codec.LZ4), 0, 0, 0, 0}, cBlock...)
		lcStored[5], lcStored[6], lcStored[7], lcStored[8] = byte(len(doc)), byte(len(doc)>>8), byte(len(doc)>>16), byte(len(doc)>>24)
		got, err = lc.Decode(nil, lcStored)
		if err := check("liblz4's block through codec.Decode", got, err); err != nil {
			return nil, nil, err
		}
		sizes = append(sizes, s)

		// The decode cells read values that are compressed whatever
		// Encode kept: a value zipline stored as is would measure a copy.
		zDec := zStored
		if !zok {
			zDec = append([]byte{0, 1, 2, 0, byte(codec.Zstd)}, cFrame...)
		}
		lDec := lStored
		if !lok {
			lDec = lcStored
		}
		n := len(doc)
		buf := func() []byte { return make([]byte, 0, 2*n+1024) }
		zipline := func(f func(dst []byte) ([]byte, error)) func() (func() error, func()) {
			return func() (func() error, func()) {
				dst := buf()
				return func() (err error) { dst, err = f(dst[:0]); return err }, func() {}
			}
		}
		withC := func(f func(z *Zstd, dst []byte) ([]byte, error)) func() (func() error, func()) {
			return func() (func() error, func()) {
				dst := buf()
				z, err := NewZstd(codec.DefaultZstdLevel)
				if err != nil {
					return func() error { return err }, func() {}
				}
				return func() (err error) { dst, err = f(z, dst[:0]); return err }, z.Close
			}
		}
		for _, c := range []cell{
			{d.Name, "zstd encode", [2]func() (func() error, func()){
				zipline(func(dst []byte) ([]byte, error) { dst, _ = zc.Encode(dst, doc); return dst, nil }),
				withC(func(z *Zstd, dst []byte) ([]byte, error) { return z.Compress(dst, doc) }),
			}},
			{d.Name, "zstd decode", [2]func() (func() error, func()){
				zipline(func(dst []byte) ([]byte, error) { return zc.Decode(dst, zDec) }),
				withC(func(z *Zstd, dst []byte) ([]byte, error) { return z.Decompress(dst, zDec[5:]) }),
			}},
			{d.Name, "zstd decode GLIDE", [2]func() (func() error, func()){
				zipline(func(dst []byte) ([]byte, error) { return zc.Decode(dst, gStored) }),
				withC(func(z *Zstd, dst []byte) ([]byte, error) { return z.Decompress(dst, gFrame) }),
			}},
			{d.Name, "lz4 encode", [2]func() (func() error, func()){
				zipline(func(dst []byte) ([]byte, error) { dst, _ = lc.Encode(dst, doc); return dst, nil }),
				withC(func(_ *Zstd, dst []byte) ([]byte, error) { return LZ4Compress(dst, doc) }),
			}},
			{d.Name, "lz4 decode", [2]func() (func() error, func()){
				zipline(func(dst []byte) ([]byte, error) { return lc.Decode(dst, lDec) }),
				withC(func(_ *Zstd, dst []byte) ([]byte, error) { return LZ4Decompress(dst, lDec[9:]) }),
			}},
		} {
			out = append(out, c)
		}
	}
	return out, sizes, nil
}

func errNoCLibs() error {
	_, err := NewZstd(3)
	return err
}

// Run measures every (document, op) cell of cfg, both sides, in
// cfg.Rounds rounds: in each round every cell runs both sides one after
// the other, zipline first in even rounds and C first in odd ones (the
// order also alternates from cell to cell), so that drift on a busy
// machine hits both alike.
func Run(cfg Config) ([]Measurement, error) {
	all, _, err := cells(cfg.Docs)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, op := range cfg.Ops {
		want[op] = true
	}
	g := max(cfg.Goroutines, 1)
	var ms []Measurement
	for r := range cfg.Rounds {
		for i, c := range all {
			if len(want) > 0 && !want[c.op] {
				continue
			}
			order := []int{0, 1}
			if (r+i)%2 == 1 {
				order = []int{1, 0}
			}
			for _, s := range order {
				m, err := measure(c.sides[s], g, cfg.Time)
				if err != nil {
					return ms, fmt.Errorf("%s %s %s: %w", c.doc, c.op, []string{SideZipline, SideC}[s], err)
				}
				m.Round, m.Doc, m.Op, m.Side, m.Goroutines = cfg.Round0+r, c.doc, c.op, []string{SideZipline, SideC}[s], g
				if cfg.Log != nil {
					cfg.Log(m)
				}
				ms = append(ms, m)
			}
		}
	}
	return ms, nil
}

// measure runs g workers of one side for about d after a warm-up, and
// returns the process CPU time and the elapsed time per operation.
func measure(newWorker func() (func() error, func()), g int, d time.Duration) (Measurement, error) {
	runtime.GC()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		stop  = make(chan struct{})
		mu    sync.Mutex
		total int64
		first error
	)
	ready := make(chan struct{}, g)
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, done := newWorker()
			defer done()
			// Warm-up: pools, tables, caches.
			for range 50 {
				if err := op(); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					break
				}
			}
			ready <- struct{}{}
			<-start
			var n int64
		loop:
			for {
				for range 16 {
					op()
				}
				n += 16
				select {
				case <-stop:
					break loop
				default:
				}
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	for range g {
		<-ready
	}
	if first != nil {
		close(start)
		close(stop)
		wg.Wait()
		return Measurement{}, first
	}
	c0, t0 := processCPU(), time.Now()
	close(start)
	time.Sleep(d)
	close(stop)
	wg.Wait()
	c1, t1 := processCPU(), time.Now()
	return Measurement{N: total, CPUNs: float64(c1-c0) / float64(total), WallNs: float64(t1.Sub(t0)) / float64(total)}, nil
}

// processCPU returns the process's CPU time, user and system, in ns
// (CLOCK_PROCESS_CPUTIME_ID).
func processCPU() int64 {
	var ts syscall.Timespec
	const clockProcessCPUTimeID = 2
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	return ts.Nano()
}

// grow returns b with room for n more bytes.
func grow(b []byte, n int) []byte { return slices.Grow(b, n) }
