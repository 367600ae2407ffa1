package pfscore

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReview21NestedStatementNeither: the invariant EventsInProgress
// documents (an event with an EVENT_ID is in progress in its current row or
// in its _history_long table) fails for a nested statement (level >= 1).
//
// endStatement pops the stack and stores the new depth in stmtDepthCell
// BEFORE it writes the row's end (slot.seq.BeginWrite) and appends the
// history rows. eventsStatementsCurrent reads stmtDepthCell first and copies
// only the levels below it, so a reader between the two sees the depth
// without the ending statement's level: the statement is not in progress
// (its level is not read, no copy fails, the thread is not unread), and its
// history row does not exist yet. Level 0 is safe only because the reader
// always copies level 0. A long MESSAGE_TEXT (clipText clones it between
// the two) widens the window. EventsInProgress hides it only by accident:
// its later events_waits_current read fails on the busy guard and marks the
// thread unread (see TestReview21BusyThreadUnread); a reader of the table
// (bridge's tablesSource over Query) counts the statement lost and then
// drops its row. Checked here on the statements table, threads whose rows
// it could not copy excluded.
func TestReview21NestedStatementNeither(t *testing.T) {
	f := newStmtFixture(t,
		WithMaxSQLTextLength(1<<16),
		WithStatementsHistoryLongSize(1<<12))
	msg := strings.Repeat("x", 1<<16+1)
	const writers = 1
	type pub struct {
		thread atomic.Uint64
		inner  atomic.Uint64 // the EVENT_ID of the latest inner statement begun
		prev   atomic.Uint64 // the one before it
	}
	pubs := make([]pub, writers)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := f.s.NewThread(f.thread, ThreadOptions{})
			defer th.End()
			pubs[w].thread.Store(th.ID())
			for !stop.Load() {
				outer := f.s.StartStatement(th, f.req, StatementInfo{Text: "GET /"})
				inner := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1"})
				id := th.stmts[1].id // the owner reads its own stack
				pubs[w].prev.Store(pubs[w].inner.Load())
				pubs[w].inner.Store(id)
				inner.End(StatementResult{Errors: 1, Message: msg})
				outer.End(StatementResult{})
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	if testing.Short() {
		deadline = time.Now().Add(2 * time.Second)
	}
	var words []uint64
	reads, checked := 0, 0
	var failure string
	for time.Now().Before(deadline) && failure == "" {
		reads++
		var th, inner, prev [writers]uint64
		for w := range writers {
			th[w], inner[w], prev[w] = pubs[w].thread.Load(), pubs[w].inner.Load(), pubs[w].prev.Load()
		}
		bad := map[uint64]bool{}
		cur := f.s.eventsStatementsCurrent(bad)
		words = f.s.stmtsLong.AppendRows(words[:0])
		inProg := map[EventKey]bool{}
		for _, e := range cur {
			if e.InProgress {
				inProg[EventKey{e.ThreadID, e.EventID}] = true
			}
		}
		inHist := map[EventKey]bool{}
		wd := f.s.stmtsLong.Width()
		for r := words; len(r) >= wd; r = r[wd:] {
			inHist[EventKey{r[qThreadID], r[qEventID]}] = true
		}
		for w := range writers {
			if inner[w] == 0 || prev[w] == 0 || bad[th[w]] {
				continue
			}
			k := EventKey{th[w], inner[w]}
			// The previous inner statement still in the ring: this one, if
			// it ended, was appended after it and is there too.
			if !inHist[EventKey{th[w], prev[w]}] {
				continue
			}
			checked++
			if !inProg[k] && !inHist[k] {
				failure = fmt.Sprintf("read %d: thread %d: inner statement %d began before the read, yet is neither in progress nor in events_statements_history_long", reads, k.ThreadID, k.EventID)
			}
		}
		runtime.Gosched()
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d reads, %d checks", reads, checked)
	if failure != "" {
		t.Fatal(failure)
	}
}

// TestReview21DigestNumberWrap: digestTable.next is a uint32 that number()
// increments on every call, also after the numbers ran out (it returns 0
// then, and find counts the statement in the NULL row). After 2^32 such
// calls (a table out of numbers, then new digests at 1M/s for ~70 min) the
// counter wraps and number() hands out record number 1 again: it stores
// the new record over the published record #1, so the slot that held
// digest A now holds digest B (twice in the index), A's statistics are
// gone and A's lookups fail. The invariant "a slot's number never changes
// its record" breaks. Simulated by storing next just below the wrap, as
// TestDigestTableNumbers stores it at exhaustion.
func TestReview21DigestNumberWrap(t *testing.T) {
	var lost atomic.Uint64
	tbl := newDigestTable(1, 64, &lost)
	info := func(i int) *digestInfo {
		d := &digestInfo{has: true, text: fmt.Sprintf("SELECT %d", i)}
		binary.LittleEndian.PutUint64(d.digest[:], uint64(i)*0x9e3779b97f4a7c15)
		return d
	}
	slotA := tbl.find("app", info(1), 1, nil)
	if slotA < 0 {
		t.Fatal("no slot for A")
	}
	tbl.next.Store(math.MaxUint32) // out of numbers, ~4G new-digest attempts since
	for i := 2; i < 5; i++ {
		tbl.find("app", info(i), 2, nil) // new digests: -1 expected, the table is out of numbers
	}
	if r := tbl.at(uint64(slotA)); r == nil || r.text != info(1).text {
		t.Errorf("slot %d of digest A now holds %q", slotA, r.text)
	}
	if r := tbl.lookup("app", &info(1).digest); r == nil {
		t.Errorf("digest A no longer found")
	}
}
