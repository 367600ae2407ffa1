package pfscore

import (
	"runtime/metrics"
	"slices"
	"sync"
	"unsafe"

	"github.com/otelpfs/otelpfs/internal/store"
	"github.com/otelpfs/otelpfs/memsum"
	"github.com/otelpfs/otelpfs/rings"
)

// The memory summary tables: memory_summary_global_by_event_name and the
// by_thread, by_account, by_user and by_host tables. Each row of a memory
// class is a sum of sources (memory.go); the global table also has the
// built-in rows, always on: memory/performance_schema/* (otelpfs's own
// containers, rings and digest storage) and memory/go/* (the Go runtime's
// memory, sampled from runtime/metrics when the table is read).

// MemoryStats are the statistics columns of a memory summary: counts and
// bytes allocated and freed, and the blocks and bytes in use now, with their
// low and high water marks since the last TRUNCATE.
type MemoryStats struct {
	CountAlloc               uint64 `pfs:"COUNT_ALLOC,counter"`
	CountFree                uint64 `pfs:"COUNT_FREE,counter"`
	SumNumberOfBytesAlloc    uint64 `pfs:"SUM_NUMBER_OF_BYTES_ALLOC,counter"`
	SumNumberOfBytesFree     uint64 `pfs:"SUM_NUMBER_OF_BYTES_FREE,counter"`
	LowCountUsed             int64  `pfs:"LOW_COUNT_USED,low"`
	CurrentCountUsed         int64  `pfs:"CURRENT_COUNT_USED,gauge"`
	HighCountUsed            int64  `pfs:"HIGH_COUNT_USED,high"`
	LowNumberOfBytesUsed     int64  `pfs:"LOW_NUMBER_OF_BYTES_USED,low"`
	CurrentNumberOfBytesUsed int64  `pfs:"CURRENT_NUMBER_OF_BYTES_USED,gauge"`
	HighNumberOfBytesUsed    int64  `pfs:"HIGH_NUMBER_OF_BYTES_USED,high"`
}

// memoryStats returns a memsum row's columns.
func memoryStats(r memsum.Row) MemoryStats {
	return MemoryStats{r.CountAlloc, r.CountFree, r.SumNumberOfBytesAlloc, r.SumNumberOfBytesFree,
		r.LowCountUsed, r.CurrentCountUsed, r.HighCountUsed,
		r.LowNumberOfBytesUsed, r.CurrentNumberOfBytesUsed, r.HighNumberOfBytesUsed}
}

// The rows of the five tables.
type (
	// MemoryGlobal is a row of memory_summary_global_by_event_name.
	MemoryGlobal struct {
		ByEventName
		MemoryStats
	}
	// MemoryByThread is a row of memory_summary_by_thread_by_event_name.
	MemoryByThread struct {
		ByThread
		MemoryStats
	}
	// MemoryByAccount is a row of memory_summary_by_account_by_event_name.
	MemoryByAccount struct {
		ByAccount
		MemoryStats
	}
	// MemoryByUser is a row of memory_summary_by_user_by_event_name.
	MemoryByUser struct {
		ByUser
		MemoryStats
	}
	// MemoryByHost is a row of memory_summary_by_host_by_event_name.
	MemoryByHost struct {
		ByHost
		MemoryStats
	}
)

// memoryClasses returns the schema's memory classes, indexed by kind index.
func (s *Schema) memoryClasses() []*Class {
	var out []*Class
	for _, c := range s.Classes() {
		if c.kind == KindMemory {
			out = append(out, c) // registration order: kindIndex == len(out)
		}
	}
	return out
}

// addMem adds the rows of p's elements (Shared or Stat, through load) to
// sums, by kind index below len(sums).
func addMem[T any](sums []memsum.Row, p *pages[T], load func(*T) memsum.Row) {
	p.each(func(k int, e *T) {
		if k < len(sums) {
			sums[k].Add(load(e))
		}
	})
}

func sharedRow(sh *memsum.Shared) memsum.Row { return sh.Load() }

// memThreadRows returns the live threads and each one's rows by class.
func (s *Schema) memThreadRows(n int) ([]*Thread, [][]memsum.Row) {
	var threads []*Thread
	var rows [][]memsum.Row
	s.memRead(func(epoch uint64) {
		threads = s.liveThreads()
		rows = make([][]memsum.Row, len(threads))
		for i, t := range threads {
			rows[i] = make([]memsum.Row, n)
			addMem(rows[i], &t.mem, func(st *memsum.Stat) memsum.Row { return st.Load(epoch) })
		}
	})
	return threads, rows
}

// memActorRows returns the rows of an actor table and each one's sums by
// class: its own statistics, its accounts' (a user's or host's) and its
// live threads'.
func (s *Schema) memActorRows(m func(*Schema) map[accountKey]*actorRow, n int) ([]*actorRow, [][]memsum.Row) {
	var actors []*actorRow
	var rows [][]memsum.Row
	s.memRead(func(epoch uint64) {
		actors = s.actorSnapshot(m(s))
		rows = make([][]memsum.Row, len(actors))
		for i, r := range actors {
			sums := make([]memsum.Row, n)
			r.mu.Lock()
			accounts, live := slices.Clone(r.accounts), slices.Clone(r.live)
			r.mu.Unlock()
			addMem(sums, &r.mem, sharedRow)
			for _, a := range accounts {
				addMem(sums, &a.mem, sharedRow)
			}
			for _, t := range live {
				addMem(sums, &t.mem, func(st *memsum.Stat) memsum.Row { return st.Load(epoch) })
			}
			rows[i] = sums
		}
	})
	return actors, rows
}

// memGlobalSums returns the global rows of the memory classes: the global
// Shared, every host's and account's, and every live thread's (not the
// users': see package memsum, "Carry").
func (s *Schema) memGlobalSums(n int) []memsum.Row {
	var sums []memsum.Row
	s.memRead(func(epoch uint64) {
		sums = make([]memsum.Row, n)
		addMem(sums, &s.memGlobal, sharedRow)
		for _, m := range []map[accountKey]*actorRow{s.hosts, s.accounts} {
			for _, r := range s.actorSnapshot(m) {
				addMem(sums, &r.mem, sharedRow)
			}
		}
		for _, t := range s.liveThreads() {
			addMem(sums, &t.mem, func(st *memsum.Stat) memsum.Row { return st.Load(epoch) })
		}
	})
	for i := range sums {
		sums[i] = sums[i].Global()
	}
	return sums
}

// MemorySummaryGlobalByEventName returns memory_summary_global_by_event_name:
// the memory classes, then the built-in rows.
func (s *Schema) MemorySummaryGlobalByEventName() []MemoryGlobal {
	classes := s.memoryClasses()
	s.beginRead()
	sums := s.memGlobalSums(len(classes))
	s.endRead()
	out := make([]MemoryGlobal, 0, len(classes)+16)
	for k, c := range classes {
		out = append(out, MemoryGlobal{ByEventName{c.name}, memoryStats(sums[k])})
	}
	out = append(out, s.builtinMemory()...)
	return append(out, s.memGo.rows()...)
}

// MemorySummaryByThreadByEventName returns
// memory_summary_by_thread_by_event_name.
func (s *Schema) MemorySummaryByThreadByEventName() []MemoryByThread {
	classes := s.memoryClasses()
	s.beginRead()
	threads, rows := s.memThreadRows(len(classes))
	s.endRead()
	var out []MemoryByThread
	for i, t := range threads {
		for k, c := range classes {
			out = append(out, MemoryByThread{ByThread{t.id, c.name}, memoryStats(rows[i][k])})
		}
	}
	return out
}

// memActorTable returns the rows of a by_account, by_user or by_host table,
// made by row from an actor row, a class and the class's statistics.
func memActorTable[R any](s *Schema, m func(*Schema) map[accountKey]*actorRow, row func(*actorRow, *Class, MemoryStats) R) []R {
	classes := s.memoryClasses()
	s.beginRead()
	actors, rows := s.memActorRows(m, len(classes))
	s.endRead()
	var out []R
	for i, r := range actors {
		for k, c := range classes {
			out = append(out, row(r, c, memoryStats(rows[i][k])))
		}
	}
	return out
}

// MemorySummaryByAccountByEventName returns
// memory_summary_by_account_by_event_name.
func (s *Schema) MemorySummaryByAccountByEventName() []MemoryByAccount {
	return memActorTable(s, func(s *Schema) map[accountKey]*actorRow { return s.accounts },
		func(r *actorRow, c *Class, st MemoryStats) MemoryByAccount {
			return MemoryByAccount{ByAccount{r.user, r.host, c.name}, st}
		})
}

// MemorySummaryByUserByEventName returns memory_summary_by_user_by_event_name.
func (s *Schema) MemorySummaryByUserByEventName() []MemoryByUser {
	return memActorTable(s, func(s *Schema) map[accountKey]*actorRow { return s.users },
		func(r *actorRow, c *Class, st MemoryStats) MemoryByUser {
			return MemoryByUser{ByUser{r.user, c.name}, st}
		})
}

// MemorySummaryByHostByEventName returns memory_summary_by_host_by_event_name.
func (s *Schema) MemorySummaryByHostByEventName() []MemoryByHost {
	return memActorTable(s, func(s *Schema) map[accountKey]*actorRow { return s.hosts },
		func(r *actorRow, c *Class, st MemoryStats) MemoryByHost {
			return MemoryByHost{ByHost{r.host, c.name}, st}
		})
}

func init() {
	truncate := (*Schema).truncateMemory
	defineRows("memory_summary_global_by_event_name", (*Schema).MemorySummaryGlobalByEventName, truncate)
	defineRows("memory_summary_by_thread_by_event_name", (*Schema).MemorySummaryByThreadByEventName, truncate)
	defineRows("memory_summary_by_account_by_event_name", (*Schema).MemorySummaryByAccountByEventName, truncate)
	defineRows("memory_summary_by_user_by_event_name", (*Schema).MemorySummaryByUserByEventName, truncate)
	defineRows("memory_summary_by_host_by_event_name", (*Schema).MemorySummaryByHostByEventName, truncate)
}

// # Built-in rows

// containerStats returns the memory of the schema's containers, counted in
// pages (a page is the unit they allocate and free).
func (s *Schema) containerStats() []store.ContainerStats {
	return []store.ContainerStats{
		s.threads.Stats(), s.mutexes.Stats(), s.rwlocks.Stats(), s.conds.Stats(),
		s.fileInsts.Stats(), s.socketInsts.Stats(),
	}
}

// builtinMemory returns the memory/performance_schema/* rows: the
// containers, counted in pages; the history_long rings, allocated once at
// New; the threads' history rings, allocated with each thread storage the
// schema keeps (a storage serves thread after thread); the digest table and
// the statement cache. As MySQL's built-in rows, they are always on and
// TRUNCATE leaves them: they count what the schema holds.
func (s *Schema) builtinMemory() []MemoryGlobal {
	var out []MemoryGlobal
	for _, st := range s.containerStats() {
		// LOW_*: the containers start empty, so their low water mark is 0.
		out = append(out, MemoryGlobal{ByEventName{st.Name}, MemoryStats{
			CountAlloc: st.CountAlloc, CountFree: st.CountFree,
			SumNumberOfBytesAlloc: st.SumBytesAlloc, SumNumberOfBytesFree: st.SumBytesFree,
			CurrentCountUsed: int64(st.CurrentCountUsed), HighCountUsed: int64(st.HighCountUsed),
			CurrentNumberOfBytesUsed: int64(st.CurrentBytesUsed), HighNumberOfBytesUsed: int64(st.HighBytesUsed)}})
	}
	fixed := func(name string, count, bytes uint64) {
		out = append(out, MemoryGlobal{ByEventName{"memory/performance_schema/" + name}, MemoryStats{
			CountAlloc: count, SumNumberOfBytesAlloc: bytes,
			LowCountUsed: 0, CurrentCountUsed: int64(count), HighCountUsed: int64(count),
			LowNumberOfBytesUsed: 0, CurrentNumberOfBytesUsed: int64(bytes), HighNumberOfBytesUsed: int64(bytes)}})
	}
	long := func(name string, g *rings.Global) {
		if g != nil {
			fixed(name, 1, ringBytes(g.Rows(), g.Width(), g.Refs()))
		}
	}
	long("events_waits_history_long", s.waitsLong)
	long("events_stages_history_long", s.stagesLong)
	long("events_statements_history_long", s.stmtsLong)
	long("events_transactions_history_long", s.trxLong)
	if made := s.coresMade.Load(); made > 0 {
		per := uint64(0)
		if h := s.cfg.waitsHistorySize; h > 0 {
			per += ringBytes(h, waitWidth, 0)
		}
		if h := s.cfg.stagesHistory; h > 0 {
			per += ringBytes(h, stageWidth, 0)
		}
		if h := s.cfg.stmtHistory; h > 0 {
			per += ringBytes(h, stmtWidth, stmtRefs)
		}
		if h := s.cfg.trxHistory; h > 0 {
			per += ringBytes(h, trxWidth, 0)
		}
		freed := min(s.coresDropped.Load(), made)
		cur := int64(made - freed)
		high := max(int64(s.coresHigh.Load()), cur)
		out = append(out, MemoryGlobal{ByEventName{"memory/performance_schema/threads.history"}, MemoryStats{
			CountAlloc: made, CountFree: freed, SumNumberOfBytesAlloc: made * per, SumNumberOfBytesFree: freed * per,
			CurrentCountUsed: cur, HighCountUsed: high, CurrentNumberOfBytesUsed: cur * int64(per), HighNumberOfBytesUsed: high * int64(per)}})
	}
	d := s.digests.Load()
	fixed("events_statements_summary_by_digest", 1+uint64(d.made.Load()),
		uint64(len(d.index))*4+uint64(len(d.chunks))*8+uint64(d.made.Load()+1)*uint64(unsafe.Sizeof(digestRecord{}))+
			min(uint64(d.next.Load())+digestChunk-1, uint64(len(d.chunks))*digestChunk)/digestChunk*digestChunk*8)
	if c := s.stmtCache; len(c.slots) > 0 {
		fixed("statement_cache", 1, uint64(len(c.slots)+len(c.sites)+len(c.texts))*8)
	}
	return out
}

// ringBytes is the memory of a history ring of rows rows of width words and
// refs pointer cells, with a version word a row.
func ringBytes(rows, width, refs int) uint64 {
	return uint64(rows) * uint64(8*(width+refs+1))
}

// goMemory samples the Go runtime's memory from runtime/metrics when
// memory_summary_global_by_event_name is read, keeping its low and high
// water marks between reads (since start, or the last TRUNCATE).
type goMemory struct {
	mu      sync.Mutex
	samples []metrics.Sample
	state   [len(goMemoryRows)]goMemoryRow
}

// goMemoryRow is the sampled state of one memory/go/* row.
type goMemoryRow struct {
	seen bool
	// A gauge row's block: its reallocations and the bytes they allocated
	// and freed.
	allocs, frees         uint64
	allocBytes, freeBytes uint64
	lowCount, highCount   int64
	lowBytes, highBytes   int64
}

// goMemoryRows are the memory/go/* rows: heap objects, with the runtime's
// own allocation and free counts; the others are gauges, each shown as one
// block that a read finding its size changed counts as reallocated.
var goMemoryRows = [...]struct {
	name   string
	gauges []string // summed; nil for heap objects
}{
	{"memory/go/heap_objects", nil},
	{"memory/go/stacks", []string{"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes"}},
	{"memory/go/gc_metadata", []string{"/memory/classes/metadata/mcache/free:bytes", "/memory/classes/metadata/mcache/inuse:bytes",
		"/memory/classes/metadata/mspan/free:bytes", "/memory/classes/metadata/mspan/inuse:bytes", "/memory/classes/metadata/other:bytes"}},
	{"memory/go/other", []string{"/memory/classes/other:bytes", "/memory/classes/profiling/buckets:bytes"}},
}

// heapMetrics are read for memory/go/heap_objects.
var heapMetrics = []string{"/gc/heap/allocs:objects", "/gc/heap/frees:objects", "/gc/heap/allocs:bytes", "/gc/heap/frees:bytes"}

// rows samples the runtime and returns the memory/go/* rows.
func (g *goMemory) rows() []MemoryGlobal {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.samples == nil {
		for _, n := range heapMetrics {
			g.samples = append(g.samples, metrics.Sample{Name: n})
		}
		for _, r := range goMemoryRows {
			for _, n := range r.gauges {
				g.samples = append(g.samples, metrics.Sample{Name: n})
			}
		}
	}
	metrics.Read(g.samples)
	val := func(i int) uint64 {
		if g.samples[i].Value.Kind() == metrics.KindUint64 {
			return g.samples[i].Value.Uint64()
		}
		return 0 // a metric this Go version lacks
	}
	out := make([]MemoryGlobal, 0, len(goMemoryRows))
	next := len(heapMetrics)
	for i, def := range goMemoryRows {
		r := &g.state[i]
		var st MemoryStats
		if def.gauges == nil {
			st.CountAlloc, st.CountFree, st.SumNumberOfBytesAlloc, st.SumNumberOfBytesFree = val(0), val(1), val(2), val(3)
			st.CurrentCountUsed = int64(st.CountAlloc - st.CountFree)
		} else {
			var cur uint64
			for range def.gauges {
				cur += val(next)
				next++
			}
			// One block, reallocated to its new size whenever a read finds
			// it changed (counted as MySQL counts a realloc: an alloc of the
			// new size and a free of the old).
			if held := r.allocBytes - r.freeBytes; r.allocs == 0 || cur != held {
				if r.allocs > 0 {
					r.frees++
					r.freeBytes += held
				}
				r.allocs++
				r.allocBytes += cur
			}
			st.CountAlloc, st.CountFree = r.allocs, r.frees
			st.SumNumberOfBytesAlloc, st.SumNumberOfBytesFree = r.allocBytes, r.freeBytes
			st.CurrentCountUsed = int64(r.allocs - r.frees)
		}
		st.CurrentNumberOfBytesUsed = int64(st.SumNumberOfBytesAlloc - st.SumNumberOfBytesFree)
		if !r.seen {
			r.seen = true
			r.lowCount, r.highCount = st.CurrentCountUsed, st.CurrentCountUsed
			r.lowBytes, r.highBytes = st.CurrentNumberOfBytesUsed, st.CurrentNumberOfBytesUsed
		}
		r.lowCount, r.highCount = min(r.lowCount, st.CurrentCountUsed), max(r.highCount, st.CurrentCountUsed)
		r.lowBytes, r.highBytes = min(r.lowBytes, st.CurrentNumberOfBytesUsed), max(r.highBytes, st.CurrentNumberOfBytesUsed)
		st.LowCountUsed, st.HighCountUsed = r.lowCount, r.highCount
		st.LowNumberOfBytesUsed, st.HighNumberOfBytesUsed = r.lowBytes, r.highBytes
		out = append(out, MemoryGlobal{ByEventName{def.name}, st})
	}
	return out
}

// rebase starts the rows' marks again from their next sample (TRUNCATE).
func (g *goMemory) rebase() {
	g.mu.Lock()
	for i := range g.state {
		g.state[i].seen = false
	}
	g.mu.Unlock()
}

// rebaseBuiltinMemory is TRUNCATE's part for the built-in rows: the Go
// runtime's marks restart; the schema's own storage keeps its counts.
func (s *Schema) rebaseBuiltinMemory() { s.memGo.rebase() }
