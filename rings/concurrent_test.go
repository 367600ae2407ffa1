package rings_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/rings"
)

// The stress tests write rows of testWidth words whose last word is a
// checksum of the others, so a torn row or a row mixing two laps fails it:
//
//	word 0: writer id    word 1: writer's sequence number
//	words 2..width-2: a function of both    word width-1: checksum
const testWidth = 12

func fillRow(row []uint64, writer, seq uint64) {
	row[0], row[1] = writer, seq
	for i := 2; i < len(row)-1; i++ {
		row[i] = (seq+uint64(i))*0x9E3779B97F4A7C15 ^ writer
	}
	row[len(row)-1] = checksum(row[:len(row)-1])
}

func checksum(words []uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, w := range words {
		h = (h ^ w) * 0x100000001b3
	}
	return h
}

// checkRows verifies every row's checksum and that each writer's rows come
// oldest first with no row twice. It returns the number of rows.
func checkRows(t *testing.T, buf []uint64, rows int) int {
	n := len(buf) / testWidth
	if len(buf)%testWidth != 0 || n > rows {
		t.Errorf("copy-out of %d words: not a whole number of rows, or more than %d rows", len(buf), rows)
		return 0
	}
	last := map[uint64]uint64{}
	for i := range n {
		row := buf[i*testWidth : (i+1)*testWidth]
		if row[testWidth-1] != checksum(row[:testWidth-1]) {
			t.Errorf("torn row %d: %v", i, row)
			return 0
		}
		w, seq := row[0], row[1]
		if prev, ok := last[w]; ok && seq <= prev {
			t.Errorf("writer %d's row %d after its row %d: not oldest first", w, seq, prev)
			return 0
		}
		last[w] = seq
	}
	return n
}

// stress runs writers appending rows (seq 1, 2, ... each, alternating Append
// and Begin/Set/Commit) against readers that copy out and check, and a
// goroutine that Resets now and then; all released together by a start gate.
// Each writer appends n rows, and goes on until the readers have made
// minScans scans, so that they overlap however the goroutines are scheduled.
func stress(t *testing.T, r ring, writers, n int) (appended, returned int64) {
	var start sync.WaitGroup
	start.Add(1)
	var writing, reading sync.WaitGroup
	var stop atomic.Bool
	var rowsSeen, scans, appends atomic.Int64
	const minScans = 200

	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			row := make([]uint64, testWidth)
			i := 1
			defer func() { appends.Add(int64(i - 1)) }()
			start.Wait()
			// Until n rows, the readers' minScans scans and one row seen;
			// but not forever, should readers never see a row.
			for ; i <= n || (scans.Load() < minScans || rowsSeen.Load() == 0) && i < 100*n; i++ {
				fillRow(row, uint64(w), uint64(i))
				if i%2 == 0 {
					r.Append(row)
					continue
				}
				s := r.Begin()
				for j, x := range row {
					s.Set(j, x)
				}
				s.Commit()
			}
		}()
	}
	for range 2 {
		reading.Add(1)
		go func() {
			defer reading.Done()
			var buf []uint64
			start.Wait()
			for !stop.Load() {
				buf = r.AppendRows(buf[:0])
				rowsSeen.Add(int64(checkRows(t, buf, r.Rows())))
				scans.Add(1)
				if t.Failed() {
					return
				}
			}
		}()
	}
	reading.Add(1)
	go func() {
		defer reading.Done()
		start.Wait()
		for !stop.Load() {
			r.Reset()
			time.Sleep(200 * time.Microsecond)
		}
	}()

	start.Done()
	writing.Wait()
	stop.Store(true)
	reading.Wait()
	return appends.Load(), rowsSeen.Load()
}

func stressN() int {
	if testing.Short() || raceEnabled {
		return 20000
	}
	return 200000
}

// TestPerThreadConcurrentSafe: one owner appends while readers scan and a
// third goroutine truncates; every row returned is whole and in order.
func TestPerThreadConcurrentSafe(t *testing.T) {
	for _, rows := range []int{1, 3, 10} {
		for _, start := range []uint64{0, rings.TicketMask - 1000} {
			t.Run(fmt.Sprintf("rows=%d/start=%#x", rows, start), func(t *testing.T) {
				r := newRing(t, perThread, rows, testWidth, start)
				if _, seen := stress(t, r, 1, stressN()); seen == 0 && !t.Failed() {
					t.Errorf("readers never got a row")
				}
				// Quiescent: the last rows, exactly.
				r.Reset()
				for i := 1; i <= rows+2; i++ {
					row := make([]uint64, testWidth)
					fillRow(row, 7, uint64(i))
					r.Append(row)
				}
				buf := r.AppendRows(nil)
				if n := checkRows(t, buf, rows); n != rows || buf[1] != 3 {
					t.Errorf("after the stress: %d rows from seq %d, want %d from 3", n, buf[1], rows)
				}
			})
		}
	}
}

// TestGlobalConcurrentSafe: more writers than cores append to rings as small
// as 2 rows, so writers are descheduled mid-append and lapped, while readers
// scan and a third goroutine truncates.
func TestGlobalConcurrentSafe(t *testing.T) {
	writers := max(4, 2*runtime.GOMAXPROCS(0))
	for _, rows := range []int{2, 5, 64} {
		for _, start := range []uint64{0, 1<<64 - 1000} {
			t.Run(fmt.Sprintf("rows=%d/start=%#x", rows, start), func(t *testing.T) {
				g, err := rings.NewGlobalAt(rows, testWidth, start)
				if err != nil {
					t.Fatal(err)
				}
				n := stressN() / writers
				appended, seen := stress(t, g, writers, n)
				if seen == 0 && !t.Failed() {
					t.Errorf("readers never got a row")
				}
				t.Logf("%d appends, %d lost to collisions, %d rows returned to readers",
					appended, g.Lost(), seen)
				// Quiescent: a lap of appends refills every slot.
				lost := g.Lost()
				for i := 1; i <= rows; i++ {
					row := make([]uint64, testWidth)
					fillRow(row, 99, uint64(i))
					g.Append(row)
				}
				buf := g.AppendRows(nil)
				if n := checkRows(t, buf, rows); n != rows || g.Lost() != lost {
					t.Errorf("after the stress: %d rows (want %d), %d more lost", n, rows, g.Lost()-lost)
				}
			})
		}
	}
}
