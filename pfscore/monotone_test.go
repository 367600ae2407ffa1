package pfscore_test

// A monotonicity checker for every summary table: while threads start and
// end, classes register, instances come and go, the setup changes and
// summaries are truncated, every cumulative column (COUNT_*, SUM_*) of every
// row only grows between two reads, except across a TRUNCATE, and every row
// is consistent in itself.

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelpfs/otelpfs/pfscore"
)

// hxStatGroup is one statistic of a summary row: COUNT_<x>, and when the
// table has them, SUM_TIMER_<y>, MIN_TIMER_<y>, AVG_TIMER_<y>, MAX_TIMER_<y>
// (y is WAIT for COUNT_STAR, else x) and SUM_NUMBER_OF_BYTES_<x>.
type hxStatGroup struct {
	count, sum, min, avg, max, bytes string // column names; "" if absent
}

// hxStatGroups finds a table's statistics from its columns.
func hxStatGroups(cols []pfscore.Column) []hxStatGroup {
	have := map[string]bool{}
	for _, c := range cols {
		have[c.Name] = true
	}
	opt := func(name string) string {
		if have[name] {
			return name
		}
		return ""
	}
	var out []hxStatGroup
	for _, c := range cols {
		x, ok := strings.CutPrefix(c.Name, "COUNT_")
		if !ok {
			continue
		}
		y := x
		if x == "STAR" {
			y = "WAIT"
		}
		out = append(out, hxStatGroup{count: c.Name, sum: opt("SUM_TIMER_" + y), min: opt("MIN_TIMER_" + y),
			avg: opt("AVG_TIMER_" + y), max: opt("MAX_TIMER_" + y), bytes: opt("SUM_NUMBER_OF_BYTES_" + x)})
	}
	return out
}

// hxCumulative reports whether a column only grows: COUNT_*, SUM_*, and
// memory_summary's HIGH_* (high water marks).
func hxCumulative(col string) bool {
	return strings.HasPrefix(col, "COUNT_") || strings.HasPrefix(col, "SUM_") || strings.HasPrefix(col, "HIGH_")
}

// hxCheckSummaryRow checks a row in itself and returns what is wrong.
func hxCheckSummaryRow(groups []hxStatGroup, v map[string]uint64) []string {
	var bad []string
	for _, g := range groups {
		n := v[g.count]
		if n == 0 {
			for _, c := range []string{g.sum, g.min, g.avg, g.max, g.bytes} {
				if c != "" && v[c] != 0 {
					bad = append(bad, fmt.Sprintf("%s = 0 but %s = %d", g.count, c, v[c]))
				}
			}
			continue
		}
		if g.sum == "" || g.min == "" || g.avg == "" || g.max == "" {
			continue
		}
		sum, lo, avg, hi := v[g.sum], v[g.min], v[g.avg], v[g.max]
		if !(lo <= avg && avg <= hi) {
			bad = append(bad, fmt.Sprintf("not %s <= %s <= %s: %d, %d, %d (%s %d, %s %d)", g.min, g.avg, g.max, lo, avg, hi, g.count, n, g.sum, sum))
		}
		if hi > sum {
			bad = append(bad, fmt.Sprintf("%s %d > %s %d (%s %d)", g.max, hi, g.sum, sum, g.count, n))
		}
	}
	return bad
}

// TestSummariesMonotoneConcurrentSafe reads every summary table in a loop
// while, concurrently, threads with and without users and hosts start, wait
// and end; classes register; mutexes, rwlocks, conds, files and sockets are
// created, used and destroyed; instruments, consumers and setup_actors are
// switched; and the checker itself truncates a summary now and then,
// between its reads, after which it forgets every table's previous values.
// It checks, for rows whose key (the columns that are not statistics) is in
// two successive reads, that no COUNT_*, SUM_* (SUM_NUMBER_OF_BYTES_*
// included) or HIGH_* went down; for every row, that MIN <= AVG <= MAX and
// MAX <= SUM when COUNT > 0, and that all are 0 when COUNT is 0; and that
// no key appears twice in one read.
func TestSummariesMonotoneConcurrentSafe(t *testing.T) {
	s := hxNew(t, append(hxWaitConsumers(), pfscore.WithMaxClasses(1024))...)
	var tables []string
	for _, name := range s.TableNames() {
		if strings.Contains(name, "summary") {
			tables = append(tables, name)
		}
	}
	if len(tables) < 11 {
		t.Fatalf("only %d summary tables: %v", len(tables), tables)
	}
	var truncatable []string
	for _, name := range tables {
		if s.Truncatable(name) {
			truncatable = append(truncatable, name)
		}
	}
	groups := map[string][]hxStatGroup{}
	for _, name := range tables {
		cols, err := s.Columns(name)
		if err != nil {
			t.Fatal(err)
		}
		groups[name] = hxStatGroups(cols)
	}

	tc := s.MustRegister("thread/hx/mono")
	mutex := s.MustRegister("wait/synch/mutex/hxm/mutex")
	rwlock := s.MustRegister("wait/synch/rwlock/hxm/rwlock")
	cond := s.MustRegister("wait/synch/cond/hxm/cond")
	fileClass := s.MustRegister("wait/io/file/hxm/data")
	logClass := s.MustRegister("wait/io/file/hxm/log")
	sockClass := s.MustRegister("wait/io/socket/hxm/client")
	// Long-lived shared instances (rwlock, cond, file and socket statistics
	// take concurrent writers).
	rw := s.NewSyncInstance(rwlock, "monotone_test.go:1")
	cv := s.NewSyncInstance(cond, "monotone_test.go:2")
	data := s.FileInstance(fileClass, "/hxm/data/shared.ibd", "monotone_test.go:3")
	sock := s.NewSocketInstance(sockClass, "tcp", "10.1.0.1:3306", "monotone_test.go:4")
	t.Cleanup(func() {
		rw.Destroy()
		cv.Destroy()
		sock.Destroy()
		s.DeleteFile("/hxm/data/shared.ibd")
	})
	memClasses := []*pfscore.Class{
		s.MustRegister("memory/hxm/buffers", pfscore.WithDefault(true, false)),
		s.MustRegister("memory/hxm/cache", pfscore.WithDefault(true, false)),
	}
	// Memory the workers leave behind when their threads end, freed later by
	// other workers (on the global row).
	var leakedMu sync.Mutex
	var leaked []hxAlloc
	users := []string{"", "alice", "bob", "carol"}
	hosts := []string{"", "web1", "web2"}

	r := hxStart(t, hxBudget(2*time.Second))
	var events, threadsStarted, classesAdded, instances, setups, reads, truncates atomic.Int64

	// Threads that start, wait and end; each worker has its own mutexes
	// (a mutex's lock waits are counted by its holder alone), which it
	// replaces now and then.
	for g := range 4 {
		r.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			m := s.NewSyncInstance(mutex, "monotone_test.go:5")
			defer func() { m.Destroy() }()
			for n := 0; n < hxIters(200_000) && r.On(); n++ {
				th := s.NewThread(tc, pfscore.ThreadOptions{User: users[rnd.IntN(len(users))], Host: hosts[rnd.IntN(len(hosts))]})
				threadsStarted.Add(1)
				var held []hxAlloc
				for range 1 + rnd.IntN(30) {
					switch rnd.IntN(11) {
					case 9, 10:
						held = hxMemory(s, th, memClasses, held, rnd)
					case 7:
						hxStatements(s, th, rnd)
					case 8:
						hxStatements(s, nil, rnd)
					case 0:
						hxIdleWait(s, th)
					case 1:
						hxSyncWait(m, th, pfscore.OpLock)
					case 2:
						hxSyncWait(rw, th, []pfscore.Operation{pfscore.OpReadLock, pfscore.OpWriteLock}[rnd.IntN(2)])
					case 3:
						hxSyncWait(cv, th, pfscore.OpWait)
					case 4:
						hxIOWait(data, th, pfscore.OpFileRead, int64(rnd.IntN(16384)))
					case 5:
						hxIOWait(data, th, pfscore.OpFileWrite, int64(rnd.IntN(16384)))
					default:
						hxIOWait(sock, th, []pfscore.Operation{pfscore.OpSocketSend, pfscore.OpSocketRecv}[rnd.IntN(2)], int64(rnd.IntN(1500)))
					}
					events.Add(1)
				}
				if len(held) > 0 { // some freed by this worker after the end, some by another
					keep := rnd.IntN(len(held) + 1)
					leakedMu.Lock()
					leaked = append(leaked, held[keep:]...)
					var theirs []hxAlloc
					if len(leaked) > 64 {
						theirs, leaked = leaked[:32], leaked[32:]
					}
					leakedMu.Unlock()
					held = held[:keep]
					th.End()
					for _, a := range append(held, theirs...) {
						s.MemoryFree(a.c, a.size, a.o)
					}
				} else {
					th.End()
				}
				if rnd.IntN(8) == 0 {
					m.Destroy()
					m = s.NewSyncInstance(mutex, "monotone_test.go:6")
				}
			}
		})
	}

	// Instances created, used (with and without a thread) and destroyed.
	r.Go(func() {
		rnd := rand.New(rand.NewPCG(10, 1))
		th := s.NewThread(tc, pfscore.ThreadOptions{User: "dave", Host: "batch"})
		defer func() { th.End() }()
		for n := 0; n < hxIters(100_000) && r.On(); n++ {
			var who *pfscore.Thread
			if n%2 == 0 {
				who = th
			}
			switch n % 4 {
			case 0:
				path := fmt.Sprintf("/hxm/log/%d.log", n)
				f := s.FileInstance(logClass, path, "monotone_test.go:7")
				for range 1 + rnd.IntN(8) {
					hxIOWait(f, who, pfscore.OpFileWrite, int64(rnd.IntN(4096)))
					hxIOWait(f, who, pfscore.OpFileSync, -1)
				}
				s.DeleteFile(path)
			case 1:
				f := s.NewSocketInstance(sockClass, "tcp", fmt.Sprintf("10.1.1.%d:3306", n%250), "monotone_test.go:8")
				for range 1 + rnd.IntN(8) {
					hxIOWait(f, who, pfscore.OpSocketRecv, int64(rnd.IntN(1500)))
				}
				f.Destroy()
			case 2:
				m := s.NewSyncInstance(rwlock, "monotone_test.go:9")
				for range 1 + rnd.IntN(8) {
					hxSyncWait(m, who, pfscore.OpWriteLock)
				}
				m.Destroy()
			default:
				m := s.NewSyncInstance(cond, "monotone_test.go:10")
				for range 1 + rnd.IntN(8) {
					hxSyncWait(m, who, pfscore.OpTimedWait)
				}
				m.Destroy()
			}
			instances.Add(1)
			if n%64 == 63 { // a new thread now and then
				th.End()
				th = s.NewThread(tc, pfscore.ThreadOptions{User: "dave", Host: "batch"})
			}
		}
	})

	// Classes that register, then get an instance, waits, and a destroy.
	r.Go(func() {
		kinds := []string{"wait/synch/mutex", "wait/synch/rwlock", "wait/synch/cond", "wait/io/file", "wait/io/socket"}
		ops := []pfscore.Operation{pfscore.OpLock, pfscore.OpReadLock, pfscore.OpWait, pfscore.OpFileRead, pfscore.OpSocketSend}
		th := s.NewThread(tc, pfscore.ThreadOptions{User: "erin"})
		defer func() { th.End() }()
		for n := 0; n < hxIters(600) && r.On(); n++ {
			k := n % len(kinds)
			c, err := s.Register(fmt.Sprintf("%s/hxm/dyn%d", kinds[k], n))
			if err != nil {
				r.Fail("Register: %v", err)
				return
			}
			classesAdded.Add(1)
			switch k {
			case 3:
				path := fmt.Sprintf("/hxm/dyn/%d", n)
				f := s.FileInstance(c, path, "monotone_test.go:11")
				hxIOWait(f, th, ops[k], 100)
				s.DeleteFile(path)
			case 4:
				f := s.NewSocketInstance(c, "tcp", "10.1.2.1:80", "monotone_test.go:12")
				hxIOWait(f, th, ops[k], 100)
				f.Destroy()
			default:
				m := s.NewSyncInstance(c, "monotone_test.go:13")
				hxSyncWait(m, th, ops[k])
				m.Destroy()
			}
			time.Sleep(time.Millisecond)
		}
	})

	// Setup changes: instruments, consumers and setup_actors switched off
	// and on again. TIMED is never switched, so that every event is timed.
	r.Go(func() {
		rnd := rand.New(rand.NewPCG(20, 1))
		on, off := true, false
		switches := []func(bool){
			func(b bool) {
				if _, err := s.UpdateInstruments("wait/synch/cond/%", &b, nil); err != nil {
					r.Fail("UpdateInstruments: %v", err)
				}
			},
			func(b bool) {
				if _, err := s.UpdateInstruments("wait/io/file/hxm/log", &b, nil); err != nil {
					r.Fail("UpdateInstruments: %v", err)
				}
			},
			func(b bool) {
				if _, err := s.UpdateInstruments("idle", &b, nil); err != nil {
					r.Fail("UpdateInstruments: %v", err)
				}
			},
			func(b bool) { s.SetConsumer(pfscore.ConsumerEventsWaitsHistory, b) },
			func(b bool) { s.SetConsumer(pfscore.ConsumerEventsWaitsCurrent, b) },
			func(b bool) { s.SetConsumer(pfscore.ConsumerThreadInstrumentation, b) },
			func(b bool) { s.SetConsumer(pfscore.ConsumerGlobalInstrumentation, b) },
			func(b bool) { s.Update("setup_actors", nil, map[string]pfscore.Value{"ENABLED": b}) },
		}
		for n := 0; n < hxIters(100_000) && r.On(); n++ {
			sw := switches[rnd.IntN(len(switches))]
			sw(off)
			time.Sleep(time.Duration(rnd.IntN(500)) * time.Microsecond)
			sw(on)
			setups.Add(1)
			time.Sleep(time.Duration(rnd.IntN(2000)) * time.Microsecond)
		}
	})

	// The checker.
	r.Go(func() {
		rnd := rand.New(rand.NewPCG(30, 1))
		prev := map[string]map[string]map[string]uint64{} // table -> key -> column -> value
		for n := 0; n < hxIters(100_000) && r.On(); n++ {
			if n%16 == 15 {
				table := truncatable[rnd.IntN(len(truncatable))]
				if err := s.Truncate(table); err != nil {
					r.Fail("Truncate(%s): %v", table, err)
					return
				}
				truncates.Add(1)
				clear(prev) // TRUNCATE is the only allowed decrease; it may reach other tables
			}
			for _, table := range tables {
				cur := map[string]map[string]uint64{}
				for _, row := range hxReadSummary(r, s, table) {
					if _, dup := cur[row.key]; dup {
						r.Fail("%s: row %s twice in one read", table, row.key)
					}
					cur[row.key] = row.vals
					for _, msg := range hxCheckSummaryRow(groups[table], row.vals) {
						r.Fail("%s %s: %s", table, row.key, msg)
					}
					if strings.HasPrefix(table, "memory_summary_") {
						for _, msg := range hxCheckMemoryRow(row.vals) {
							r.Fail("%s %s: %s", table, row.key, msg)
						}
					}
					p, ok := prev[table][row.key]
					if !ok {
						continue
					}
					// A memory row that sums many-writer statistics (all
					// but a thread's) has marks a concurrent read may see
					// off by the operations in flight, HIGH included (see
					// pfscore/memory.go); a thread's are exact.
					fuzzyMarks := strings.HasPrefix(table, "memory_summary_") && table != "memory_summary_by_thread_by_event_name"
					var cols []string
					for c := range row.vals {
						if hxCumulative(c) && !(fuzzyMarks && strings.HasPrefix(c, "HIGH_")) {
							cols = append(cols, c)
						}
					}
					sort.Strings(cols)
					for _, c := range cols {
						if row.vals[c] < p[c] {
							r.Fail("%s %s: %s went down from %d to %d", table, row.key, c, p[c], row.vals[c])
						}
					}
				}
				prev[table] = cur
			}
			reads.Add(1)
		}
	})

	r.Begin()
	r.Wait()
	t.Logf("%d reads of %d summary tables, %d truncates; %d threads, %d events, %d instances, %d classes, %d setup switches",
		reads.Load(), len(tables), truncates.Load(), threadsStarted.Load(), events.Load(), instances.Load(), classesAdded.Load(), setups.Load())
}

// hxStatements runs a statement on th (nil: none), with one nested in it
// now and then, of texts from a small set so that digests repeat, in a
// transaction now and then.
// hxCheckMemoryRow checks a memory summary row's invariants: CURRENT is
// ALLOC - FREE, for counts and bytes, and LOW <= CURRENT <= HIGH.
func hxCheckMemoryRow(v map[string]uint64) []string {
	var bad []string
	for _, g := range []struct{ alloc, free, low, cur, high string }{
		{"COUNT_ALLOC", "COUNT_FREE", "LOW_COUNT_USED", "CURRENT_COUNT_USED", "HIGH_COUNT_USED"},
		{"SUM_NUMBER_OF_BYTES_ALLOC", "SUM_NUMBER_OF_BYTES_FREE", "LOW_NUMBER_OF_BYTES_USED", "CURRENT_NUMBER_OF_BYTES_USED", "HIGH_NUMBER_OF_BYTES_USED"},
	} {
		cur, low, high := int64(v[g.cur]), int64(v[g.low]), int64(v[g.high])
		if want := int64(v[g.alloc] - v[g.free]); cur != want {
			bad = append(bad, fmt.Sprintf("%s = %d, not %s - %s = %d", g.cur, cur, g.alloc, g.free, want))
		}
		if !(low <= cur && cur <= high) {
			bad = append(bad, fmt.Sprintf("not %s <= %s <= %s: %d, %d, %d", g.low, g.cur, g.high, low, cur, high))
		}
	}
	return bad
}

// hxAlloc is an allocation a memory workload holds.
type hxAlloc struct {
	c    *pfscore.Class
	size uint64
	o    pfscore.MemoryOwner
}

// hxMemory allocates, frees or reallocates memory of one of classes on th
// (or on no thread), with held the allocations th holds.
func hxMemory(s *pfscore.Schema, th *pfscore.Thread, classes []*pfscore.Class, held []hxAlloc, rnd *rand.Rand) []hxAlloc {
	who := th
	if rnd.IntN(4) == 0 {
		who = nil
	}
	switch {
	case len(held) > 0 && rnd.IntN(3) == 0:
		i := rnd.IntN(len(held))
		a := held[i]
		s.MemoryFree(a.c, a.size, a.o)
		return append(held[:i], held[i+1:]...)
	case len(held) > 0 && rnd.IntN(3) == 0:
		i := rnd.IntN(len(held))
		n := uint64(1 + rnd.IntN(1<<16))
		held[i].o = s.MemoryRealloc(who, held[i].c, held[i].size, n, held[i].o)
		held[i].size = n
		return held
	}
	c := classes[rnd.IntN(len(classes))]
	n := uint64(1 + rnd.IntN(1<<16))
	return append(held, hxAlloc{c, n, s.MemoryAlloc(who, c, n)})
}

func hxStatements(s *pfscore.Schema, th *pfscore.Thread, rnd *rand.Rand) {
	texts := []string{"SELECT a FROM t WHERE id = %d", "UPDATE t SET a = %d", "INSERT INTO t VALUES (%d)", "SELECT %d"}
	run := func() pfscore.Statement {
		return s.StartSQL(th, pfscore.StatementInfo{Text: fmt.Sprintf(texts[rnd.IntN(len(texts))], rnd.IntN(100)),
			Schema: []string{"app", "audit"}[rnd.IntN(2)]})
	}
	res := func() pfscore.StatementResult {
		return pfscore.StatementResult{RowsSent: uint64(rnd.IntN(10)), RowsAffected: uint64(rnd.IntN(3)),
			Errors: uint64(rnd.IntN(2)), PoolTime: uint64(rnd.IntN(1000)), Cancelled: rnd.IntN(8) == 0}
	}
	var tx pfscore.Transaction
	if rnd.IntN(3) == 0 {
		tx = s.StartTransaction(th, pfscore.TransactionInfo{ReadOnly: rnd.IntN(2) == 0})
	}
	outer := run()
	if rnd.IntN(4) == 0 {
		inner := run()
		inner.End(res())
	}
	outer.End(res())
	tx.End(rnd.IntN(4) != 0) // the zero Transaction does nothing
}

// TestSummaryRowsConsistentConcurrentSafe checks the rows of the by_instance
// summaries in themselves (see hxCheckSummaryRow) while instances are
// young: writers create an instance, end a short wait, a long one and a
// short one on it, and destroy it, over and over. A row whose COUNT and SUM
// come from one moment and MIN and MAX from another (an event half added)
// shows MAX < AVG, MIN > AVG, MAX > SUM, or COUNT 0 with a SUM.
func TestSummaryRowsConsistentConcurrentSafe(t *testing.T) {
	s := hxNew(t)
	tc := s.MustRegister("thread/hx/young")
	mutex := s.MustRegister("wait/synch/mutex/hxy/mutex")
	rwlock := s.MustRegister("wait/synch/rwlock/hxy/rwlock")
	file := s.MustRegister("wait/io/file/hxy/file")
	sock := s.MustRegister("wait/io/socket/hxy/sock")
	spin := func(d time.Duration) { // a wait of about d
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	r := hxStart(t, hxBudget(time.Second))
	var instances, reads atomic.Int64
	for g := range 4 {
		r.Go(func() {
			th := s.NewThread(tc, pfscore.ThreadOptions{User: "young"})
			defer func() { th.End() }()
			for n := 0; n < hxIters(1_000_000) && r.On(); n++ {
				var begin func(w *pfscore.WaitState) bool
				var destroy func()
				switch g {
				case 0:
					m := s.NewSyncInstance(mutex, "monotone_test.go:20")
					begin = func(w *pfscore.WaitState) bool { return m.BeginWait(w, th, pfscore.OpLock) }
					destroy = m.Destroy
				case 1:
					m := s.NewSyncInstance(rwlock, "monotone_test.go:21")
					begin = func(w *pfscore.WaitState) bool { return m.BeginWait(w, nil, pfscore.OpReadLock) }
					destroy = m.Destroy
				case 2:
					// A few names, reused: each is deleted below, and the
					// names table keeps every name it has seen (on a fast
					// machine, a new name a round would fill it).
					path := fmt.Sprintf("/hxy/%d", n%64)
					f := s.FileInstance(file, path, "monotone_test.go:22")
					begin = func(w *pfscore.WaitState) bool { return f.BeginWait(w, th, pfscore.OpFileRead) }
					destroy = func() { s.DeleteFile(path) }
				default:
					f := s.NewSocketInstance(sock, "tcp", "10.2.0.1:80", "monotone_test.go:23")
					begin = func(w *pfscore.WaitState) bool { return f.BeginWait(w, nil, pfscore.OpSocketSend) }
					destroy = f.Destroy
				}
				for _, d := range []time.Duration{0, 2 * time.Microsecond, 0} {
					var w pfscore.WaitState
					if begin(&w) {
						spin(d)
						w.EndWait(64)
					}
				}
				destroy()
				instances.Add(1)
			}
		})
	}
	tables := []string{"events_waits_summary_by_instance", "file_summary_by_instance", "socket_summary_by_instance"}
	groups := map[string][]hxStatGroup{}
	for _, table := range tables {
		cols, err := s.Columns(table)
		if err != nil {
			t.Fatal(err)
		}
		groups[table] = hxStatGroups(cols)
	}
	for _, table := range tables {
		r.Go(func() {
			for n := 0; n < hxIters(10_000_000) && r.On(); n++ {
				for _, row := range hxReadSummary(r, s, table) {
					for _, msg := range hxCheckSummaryRow(groups[table], row.vals) {
						r.Fail("%s %s: %s", table, row.key, msg)
					}
					if strings.HasPrefix(table, "memory_summary_") {
						for _, msg := range hxCheckMemoryRow(row.vals) {
							r.Fail("%s %s: %s", table, row.key, msg)
						}
					}
				}
				reads.Add(1)
			}
		})
	}
	r.Begin()
	r.Wait()
	t.Logf("%d instances, %d reads", instances.Load(), reads.Load())
}
