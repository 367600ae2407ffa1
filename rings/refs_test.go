package rings_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/otelpfs/otelpfs/rings"
)

// Ref cells: rows that carry Go pointers beside their words.

// hex16 returns x as 16 hex digits, in a string of its own: 16 bytes on the
// heap, whatever x.
func hex16(x uint64) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 16)
	for i := 15; i >= 0; i-- {
		b[i] = digits[x&15]
		x >>= 4
	}
	return unsafe.String(&b[0], len(b))
}

// str16 reads the 16-byte string p points to.
func str16(p unsafe.Pointer) string { return unsafe.String((*byte)(p), 16) }

func TestRefsRoundTrip(t *testing.T) {
	for _, kind := range []string{perThread, global} {
		t.Run(kind, func(t *testing.T) {
			r := newRingRefs(t, kind, 4, 2, 3, 0)
			if r.Rows() != 4 || r.Width() != 2 || r.Refs() != 3 {
				t.Fatalf("Rows, Width, Refs = %d, %d, %d, want 4, 2, 3", r.Rows(), r.Width(), r.Refs())
			}
			for i := uint64(1); i <= 6; i++ {
				sql, schema := hex16(i), hex16(100+i)
				r.AppendRefs([]uint64{i, 10 * i}, []unsafe.Pointer{unsafe.Pointer(unsafe.StringData(sql)), nil, unsafe.Pointer(unsafe.StringData(schema))})
			}
			// Into buffers that already hold something: the rows and refs
			// go after it.
			rows, refs := r.AppendRowsRefs([]uint64{42}, []unsafe.Pointer{nil})
			if want := []uint64{42, 3, 30, 4, 40, 5, 50, 6, 60}; !slices.Equal(rows, want) {
				t.Fatalf("rows = %v, want %v", rows, want)
			}
			if len(refs) != 1+4*3 || refs[0] != nil {
				t.Fatalf("%d refs, want 1+4*3, the first one untouched", len(refs))
			}
			for k := range 4 {
				i := rows[1+2*k]
				got := refs[1+3*k : 1+3*k+3]
				if got[1] != nil || str16(got[0]) != hex16(i) || str16(got[2]) != hex16(100+i) {
					t.Errorf("row %d's refs: %v", i, got)
				}
			}
			if plain := r.AppendRows(nil); !slices.Equal(plain, rows[1:]) {
				t.Errorf("AppendRows = %v, want %v", plain, rows[1:])
			}
		})
	}
}

// TestRefsClearedByAppendAndBegin: a row written by Append or Begin on a
// ring with refs has nil refs, not the refs of the slot's older row.
func TestRefsClearedByAppendAndBegin(t *testing.T) {
	for _, kind := range []string{perThread, global} {
		r := newRingRefs(t, kind, 2, 1, 1, 0)
		s := hex16(7)
		ref := []unsafe.Pointer{unsafe.Pointer(unsafe.StringData(s))}
		r.AppendRefs([]uint64{1}, ref)
		r.AppendRefs([]uint64{2}, ref)
		r.Append([]uint64{3}) // over row 1
		sl := r.Begin()       // over row 2
		sl.Set(0, 4)
		sl.Commit()
		rows, refs := r.AppendRowsRefs(nil, nil)
		if !slices.Equal(rows, []uint64{3, 4}) || !slices.Equal(refs, []unsafe.Pointer{nil, nil}) {
			t.Errorf("%s: rows %v, refs %v; want [3 4], [nil nil]", kind, rows, refs)
		}
	}
}

// TestRefsZero: a ring made with refs=0 is a plain ring: AppendRefs with no
// refs appends, and AppendRowsRefs leaves dstRefs alone.
func TestRefsZero(t *testing.T) {
	for _, kind := range []string{perThread, global} {
		r := newRingRefs(t, kind, 3, 1, 0, 0)
		r.AppendRefs([]uint64{1}, nil)
		r.AppendRefs([]uint64{2}, []unsafe.Pointer{})
		keep := []unsafe.Pointer{nil}
		rows, refs := r.AppendRowsRefs(nil, keep)
		if !slices.Equal(rows, []uint64{1, 2}) || len(refs) != 1 || r.Refs() != 0 {
			t.Errorf("%s: rows %v, %d refs, Refs %d; want [1 2], 1, 0", kind, rows, len(refs), r.Refs())
		}
	}
}

func TestNewRefsErrors(t *testing.T) {
	for _, c := range [][3]int{{1, 1, -1}, {1, 1, 65}, {0, 1, 1}, {1, 0, 1}} {
		if _, err := rings.NewPerThreadRefs(c[0], c[1], c[2]); !errors.Is(err, rings.ErrSize) {
			t.Errorf("NewPerThreadRefs(%d, %d, %d) error = %v, want ErrSize", c[0], c[1], c[2], err)
		}
		if _, err := rings.NewGlobalRefs(c[0], c[1], c[2]); !errors.Is(err, rings.ErrSize) {
			t.Errorf("NewGlobalRefs(%d, %d, %d) error = %v, want ErrSize", c[0], c[1], c[2], err)
		}
	}
	for _, refs := range []int{0, 1, 64} {
		p, err := rings.NewPerThreadRefs(2, 1, refs)
		if err != nil || p.Refs() != refs {
			t.Errorf("NewPerThreadRefs(2, 1, %d): %v", refs, err)
		}
		g, err := rings.NewGlobalRefs(2, 1, refs)
		if err != nil || g.Refs() != refs {
			t.Errorf("NewGlobalRefs(2, 1, %d): %v", refs, err)
		}
	}
}

func TestAppendRefsWrongLengthPanics(t *testing.T) {
	for _, kind := range []string{perThread, global} {
		for _, c := range []struct {
			nrefs, width, refs int
		}{
			{0, 2, 1}, // refs on a ring without refs
			{2, 2, 1}, // too few refs
			{2, 2, 3}, // too many
			{2, 2, 0},
			{2, 1, 2}, // a short row
		} {
			r := newRingRefs(t, kind, 2, 2, c.nrefs, 0)
			func() {
				defer func() {
					msg, _ := recover().(string)
					if !strings.HasPrefix(msg, "pfs: BUG: rings: ") {
						t.Errorf("%s(refs=%d).AppendRefs(%d words, %d refs): panic %q, want a pfs: BUG: rings: panic",
							kind, c.nrefs, c.width, c.refs, msg)
					}
				}()
				r.AppendRefs(make([]uint64, c.width), make([]unsafe.Pointer, c.refs))
			}()
		}
	}
}

// TestGlobalRefsCollision: an AppendRefs that finds its slot held is dropped
// with its refs and counted in Lost; the holder's row keeps nil refs.
func TestGlobalRefsCollision(t *testing.T) {
	g, err := rings.NewGlobalRefs(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := hex16(100), hex16(101), hex16(102)
	ref := func(s string) []unsafe.Pointer { return []unsafe.Pointer{unsafe.Pointer(unsafe.StringData(s))} }
	stalled := g.Begin() // ticket 0, slot 0
	stalled.Set(0, 100)
	g.AppendRefs([]uint64{101}, ref(b)) // ticket 1, slot 1
	g.AppendRefs([]uint64{102}, ref(c)) // ticket 2, slot 0: held, dropped
	if g.Lost() != 1 {
		t.Fatalf("Lost = %d after a collision with a held slot, want 1", g.Lost())
	}
	rows, refs := g.AppendRowsRefs(nil, nil)
	if !slices.Equal(rows, []uint64{101}) || len(refs) != 1 || str16(refs[0]) != b {
		t.Fatalf("rows %v, refs %v while slot 0 is held; want [101] and %q", rows, refs, b)
	}
	stalled.Commit()                    // ticket 0 is outside the window [1, 3): never shown
	g.AppendRefs([]uint64{103}, ref(a)) // ticket 3, slot 1
	g.AppendRefs([]uint64{104}, ref(c)) // ticket 4, slot 0
	rows, refs = g.AppendRowsRefs(nil, nil)
	if !slices.Equal(rows, []uint64{103, 104}) || len(refs) != 2 || str16(refs[0]) != a || str16(refs[1]) != c {
		t.Fatalf("rows %v, refs %v; want [103 104] and %q, %q", rows, refs, a, c)
	}
	if g.Lost() != 1 {
		t.Fatalf("Lost = %d, want 1", g.Lost())
	}
}

// TestRefsKeepAliveUntilOverwritten: a row's refs keep their target alive
// while the row is in the ring, and after a Reset (which writes no slot);
// the append that overwrites the slot, even a plain Append, lets it go.
func TestRefsKeepAliveUntilOverwritten(t *testing.T) {
	for _, kind := range []string{perThread, global} {
		t.Run(kind, func(t *testing.T) {
			r := newRingRefs(t, kind, 2, 1, 1, 0)
			var freed atomic.Bool
			func() {
				target := &refBox{1, 2}
				runtime.AddCleanup(target, func(*atomic.Bool) { freed.Store(true) }, &freed)
				r.AppendRefs([]uint64{1}, []unsafe.Pointer{unsafe.Pointer(target)})
			}()
			r.Append([]uint64{2})
			collected := func() bool {
				for range 10 {
					runtime.GC()
					time.Sleep(time.Millisecond) // cleanups run on their own goroutine
					if freed.Load() {
						return true
					}
				}
				return false
			}
			if collected() {
				t.Fatal("a row's ref target was collected while the row is in the ring")
			}
			r.Reset()
			if collected() {
				t.Fatal("a ref target was collected after Reset, which writes no slot")
			}
			r.Append([]uint64{3}) // over row 1
			if !collected() {
				t.Fatal("a ref target was not collected once its slot was overwritten by Append")
			}
		})
	}
}

// TestRefsSurviveGC: strings that only the ring points to read back intact
// after collections that reuse every free byte of their size class.
func TestRefsSurviveGC(t *testing.T) {
	const rows = 2000
	for _, kind := range []string{perThread, global} {
		t.Run(kind, func(t *testing.T) {
			r := newRingRefs(t, kind, rows, 1, 2, 0)
			for i := range uint64(rows) {
				s := hex16(i)
				r.AppendRefs([]uint64{i}, []unsafe.Pointer{unsafe.Pointer(unsafe.StringData(s)), unsafe.Pointer(&refBox{i, ^i})})
			}
			for range 3 {
				runtime.GC()
				churn(100000)
			}
			checkRefRows(t, r, rows)
		})
	}
}

// churn allocates n 16-byte strings and boxes that look nothing like the
// test's, so that memory a collection freed is overwritten.
func churn(n int) {
	junk := make([]string, n)
	boxes := make([]*refBox, n)
	for i := range junk {
		junk[i] = strings.Clone("zzzzzzzzzzzzzzzz")
		boxes[i] = &refBox{^uint64(0), ^uint64(0)}
	}
	runtime.KeepAlive(junk)
	runtime.KeepAlive(boxes)
}

// checkRefRows checks that the ring holds rows 0, 1, ... n-1 of
// TestRefsSurviveGC, each with its refs.
func checkRefRows(t *testing.T, r ring, n int) {
	t.Helper()
	rows, refs := r.AppendRowsRefs(nil, nil)
	if len(rows) != n || len(refs) != 2*n {
		t.Fatalf("%d rows and %d refs, want %d and %d", len(rows), len(refs), n, 2*n)
	}
	for k, i := range rows {
		if s := str16(refs[2*k]); s != hex16(i) {
			t.Fatalf("row %d's string reads %q, want %q", i, s, hex16(i))
		}
		if b := (*refBox)(refs[2*k+1]); *b != (refBox{i, ^i}) {
			t.Fatalf("row %d's box holds %v", i, *b)
		}
	}
}

// TestRefsWriteAllocs pins 0 allocations on AppendRefs, on Append and Begin
// on a ring with refs, and on a copy-out with refs into buffers with room.
func TestRefsWriteAllocs(t *testing.T) {
	for _, kind := range []string{perThread, global} {
		r := newRingRefs(t, kind, 10, 16, 4, 0)
		row := make([]uint64, 16)
		s := hex16(1)
		refs := []unsafe.Pointer{unsafe.Pointer(unsafe.StringData(s)), nil, unsafe.Pointer(&row[0]), unsafe.Pointer(&refBox{1, 2})}
		if n := testing.AllocsPerRun(100, func() { r.AppendRefs(row, refs) }); n != 0 {
			t.Errorf("%s.AppendRefs: %v allocs, want 0", kind, n)
		}
		// As a caller would: refs in an array on its stack, which stays there
		// if AppendRefs is called on the concrete type (through an
		// interface, escape analysis must assume the array escapes).
		sql, schema := "SELECT 1", "test"
		var n float64
		switch r := r.(type) {
		case *rings.PerThread:
			n = testing.AllocsPerRun(100, func() {
				refs := [4]unsafe.Pointer{unsafe.Pointer(unsafe.StringData(sql)), nil, unsafe.Pointer(unsafe.StringData(schema))}
				r.AppendRefs(row, refs[:])
			})
		case *rings.Global:
			n = testing.AllocsPerRun(100, func() {
				refs := [4]unsafe.Pointer{unsafe.Pointer(unsafe.StringData(sql)), nil, unsafe.Pointer(unsafe.StringData(schema))}
				r.AppendRefs(row, refs[:])
			})
		}
		if n != 0 {
			t.Errorf("%s.AppendRefs of refs on the stack: %v allocs, want 0", kind, n)
		}
		if n := testing.AllocsPerRun(100, func() { r.Append(row) }); n != 0 {
			t.Errorf("%s.Append with refs: %v allocs, want 0", kind, n)
		}
		if n := testing.AllocsPerRun(100, func() { r.Begin().Commit() }); n != 0 {
			t.Errorf("%s.Begin/Commit with refs: %v allocs, want 0", kind, n)
		}
		for range 5 {
			r.AppendRefs(row, refs)
		}
		buf := make([]uint64, 0, 10*16)
		bufRefs := make([]unsafe.Pointer, 0, 10*4)
		if n := testing.AllocsPerRun(100, func() { buf, bufRefs = r.AppendRowsRefs(buf[:0], bufRefs[:0]) }); n != 0 {
			t.Errorf("%s.AppendRowsRefs with room: %v allocs, want 0", kind, n)
		}
	}
}

// The refs stress: writers append rows of testWidth words (fillRow: writer,
// sequence number, ..., checksum) and, for every third sequence number, refs
// that say the same thing in another form:
//
//	ref 0: a fresh string, hex16(writer<<32 | seq)
//	ref 1: nil
//	ref 2: a fresh refBox{writer<<32 | seq, checksum}
//	ref 3: a fresh string, hex16(checksum)
//
// The other rows go in with Append or Begin/Set/Commit, and have nil refs.
// Readers check every row they get against its refs, so a reader that kept
// a row with another row's refs (a torn pair) fails, and so does one that
// reads a collected string or box. A goroutine collects garbage and churns
// the heap meanwhile; another Resets now and then.
const stressRefs = 4

func fillRefs(refs []unsafe.Pointer, row []uint64) {
	key, sum := row[0]<<32|row[1], row[len(row)-1]
	refs[0] = unsafe.Pointer(unsafe.StringData(hex16(key)))
	refs[1] = nil
	refs[2] = unsafe.Pointer(&refBox{key, sum})
	refs[3] = unsafe.Pointer(unsafe.StringData(hex16(sum)))
}

// checkRefs checks each of the n rows of buf against its refs, and returns
// how many rows had refs.
func checkRefs(t *testing.T, buf []uint64, refs []unsafe.Pointer, n int) int {
	if len(refs) != n*stressRefs {
		t.Errorf("%d rows but %d refs", n, len(refs))
		return 0
	}
	with := 0
	for k := range n {
		row := buf[k*testWidth : (k+1)*testWidth]
		rr := refs[k*stressRefs : (k+1)*stressRefs]
		if row[1]%3 != 0 {
			if rr[0] != nil || rr[1] != nil || rr[2] != nil || rr[3] != nil {
				t.Errorf("row %d/%d has refs %v, appended without", row[0], row[1], rr)
				return 0
			}
			continue
		}
		key, sum := row[0]<<32|row[1], row[len(row)-1]
		if rr[0] == nil || rr[1] != nil || rr[2] == nil || rr[3] == nil {
			t.Errorf("row %d/%d: refs %v, want non-nil, nil, non-nil, non-nil", row[0], row[1], rr)
			return 0
		}
		if s, box, s3 := str16(rr[0]), *(*refBox)(rr[2]), str16(rr[3]); s != hex16(key) || box != (refBox{key, sum}) || s3 != hex16(sum) {
			t.Errorf("row %d/%d (key %#x, checksum %#x) with refs %q, %#x, %q: torn or collected",
				row[0], row[1], key, sum, s, box, s3)
			return 0
		}
		with++
	}
	return with
}

func refsStress(t *testing.T, r ring, writers, n int) (appended, returned, withRefs int64) {
	var start sync.WaitGroup
	start.Add(1)
	var writing, others sync.WaitGroup
	var stop atomic.Bool
	var rowsSeen, refsSeen, scans, appends atomic.Int64
	const minScans = 200

	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			row := make([]uint64, testWidth)
			refs := make([]unsafe.Pointer, stressRefs)
			i := 1
			defer func() { appends.Add(int64(i - 1)) }()
			start.Wait()
			for ; i <= n || (scans.Load() < minScans || refsSeen.Load() == 0) && i < 100*n; i++ {
				fillRow(row, uint64(w), uint64(i))
				switch i % 3 {
				case 0:
					fillRefs(refs, row)
					r.AppendRefs(row, refs)
				case 1:
					r.Append(row)
				default:
					s := r.Begin()
					for j, x := range row {
						s.Set(j, x)
					}
					s.Commit()
				}
			}
		}()
	}
	for range 2 {
		others.Add(1)
		go func() {
			defer others.Done()
			var buf []uint64
			var refs []unsafe.Pointer
			start.Wait()
			for !stop.Load() {
				buf, refs = r.AppendRowsRefs(buf[:0], refs[:0])
				n := checkRows(t, buf, r.Rows())
				rowsSeen.Add(int64(n))
				refsSeen.Add(int64(checkRefs(t, buf, refs, n)))
				scans.Add(1)
				if t.Failed() {
					return
				}
			}
		}()
	}
	others.Add(2)
	go func() {
		defer others.Done()
		start.Wait()
		for !stop.Load() {
			r.Reset()
			time.Sleep(200 * time.Microsecond)
		}
	}()
	go func() {
		defer others.Done()
		start.Wait()
		for !stop.Load() {
			runtime.GC()
			churn(1000)
		}
	}()

	start.Done()
	writing.Wait()
	stop.Store(true)
	others.Wait()
	return appends.Load(), rowsSeen.Load(), refsSeen.Load()
}

// TestRefsConcurrentSafe: writers append rows with and without refs while
// readers check every row against its refs, a goroutine truncates and
// another collects garbage. PerThread has its one owner; Global has more
// writers than cores on rings as small as 2 rows, so that writers are lapped
// mid-append.
func TestRefsConcurrentSafe(t *testing.T) {
	writers := max(4, 2*runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		kind    string
		rows    []int
		writers int
	}{
		{perThread, []int{1, 3, 10}, 1},
		{global, []int{2, 5, 64}, writers},
	} {
		for _, rows := range c.rows {
			for _, start := range []uint64{0, 1<<64 - 1000} {
				t.Run(fmt.Sprintf("%s/rows=%d/start=%#x", c.kind, rows, start), func(t *testing.T) {
					r := newRingRefs(t, c.kind, rows, testWidth, stressRefs, start)
					appended, seen, with := refsStress(t, r, c.writers, stressN()/c.writers)
					if with == 0 && !t.Failed() {
						t.Errorf("readers never got a row with refs")
					}
					lost := uint64(0)
					if g, ok := r.(*rings.Global); ok {
						lost = g.Lost()
					}
					t.Logf("%d appends, %d lost to collisions, %d rows returned to readers, %d with refs",
						appended, lost, seen, with)
				})
			}
		}
	}
}

// TestRefsGCConcurrentSafe: rows whose refs are the only pointers to their
// strings and boxes stay in a large ring for many collections, while a
// goroutine collects and churns the heap and readers check every row against
// its refs. Were the ref cells invisible to the collector, the readers would
// find the churn's bytes in place of the strings.
func TestRefsGCConcurrentSafe(t *testing.T) {
	budget := time.Second
	if testing.Short() || raceEnabled {
		budget = 300 * time.Millisecond
	}
	for _, c := range []struct {
		kind    string
		writers int
	}{{perThread, 1}, {global, 2}} {
		t.Run(c.kind, func(t *testing.T) {
			r := newRingRefs(t, c.kind, 4096, testWidth, stressRefs, 0)
			var stop atomic.Bool
			var wg sync.WaitGroup
			var rowsSeen, collections atomic.Int64
			for w := range c.writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					row := make([]uint64, testWidth)
					refs := make([]unsafe.Pointer, stressRefs)
					for i := 3; !stop.Load(); i += 3 { // multiples of 3: rows with refs
						fillRow(row, uint64(w), uint64(i))
						fillRefs(refs, row)
						r.AppendRefs(row, refs)
						clear(refs)
						time.Sleep(20 * time.Microsecond) // let rows live through collections
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					runtime.GC()
					collections.Add(1)
					churn(2000)
				}
			}()
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var buf []uint64
					var refs []unsafe.Pointer
					for !stop.Load() {
						buf, refs = r.AppendRowsRefs(buf[:0], refs[:0])
						n := checkRows(t, buf, r.Rows())
						rowsSeen.Add(int64(checkRefs(t, buf, refs, n)))
						if t.Failed() {
							return
						}
						// Hold no copies between reads: only the ring keeps
						// the targets alive.
						clear(refs)
						time.Sleep(time.Millisecond)
					}
				}()
			}
			time.Sleep(budget)
			stop.Store(true)
			wg.Wait()
			if rowsSeen.Load() == 0 && !t.Failed() {
				t.Errorf("readers never got a row")
			}
			t.Logf("%d collections, %d rows checked", collections.Load(), rowsSeen.Load())
		})
	}
}
