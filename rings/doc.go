// Package rings holds the history rings behind the events_*_history and
// events_*_history_long tables.
//
// # What it is
//
// A per-thread ring (PerThread: one writer, many readers) keeps the last N
// rows of one actor; a global ring (Global: many writers through one atomic
// counter) keeps the last M rows of the whole process. Every slot is guarded
// by its own version word, so a reader never returns a half-written row.
// Sizes are fixed at construction and nothing allocates on the write side.
//
// A row is a fixed number of 64-bit words (the ring's width), chosen at
// construction; pfscore encodes an event record (ids, timestamps, interned
// name indexes) into them. The garbage collector does not look into words,
// so a row that must point at Go memory (a statement's SQL text, its digest
// text, its schema name) also carries a fixed number of ref cells (the
// ring's Refs, 0 to 64, chosen with NewPerThreadRefs or NewGlobalRefs): Go
// pointers, seen and kept alive by the collector ("Refs" below). Storage is
// one flat slice of owned.Uint64 cells, rows*width long, one flat slice of
// atomic.Pointer ref cells, rows*refs long (none when refs is 0), and one
// slice of rows version words.
//
// # Methods and their contracts
//
//	PerThread.Append, .AppendRefs, .Begin  owner only: one goroutine at a time
//	Slot.Set, Slot.Commit                  the goroutine that called Begin
//	Global.Append, .AppendRefs, .Begin     safe for concurrent use
//	AppendRows, AppendRowsRefs, Reset,     safe for concurrent use, on both
//	Lost, Rows, Width, Refs
//
// Append(row) stores a whole row; AppendRefs(row, refs) stores a whole row
// and its refs. Begin returns a Slot to fill word by word with Set and
// publish with Commit; Global.Begin may return a discard slot (Slot.OK
// false) on which Set and Commit do nothing. Append and Begin leave a row's
// refs nil. AppendRows appends the rows, oldest first, width words each, to
// a caller's buffer; AppendRowsRefs also appends their refs, Refs each, in
// the same order, to a second buffer. Reset is TRUNCATE TABLE.
//
// # Tickets and version words
//
// Every append takes a ticket: its position in the ring's history, counted
// modulo 2^62. A PerThread's owner counts its own tickets; a Global's
// writers take theirs from one atomic.Uint64 (the ticket is the counter's
// old value modulo 2^62, and since 2^64 is a multiple of 2^62 the counter's
// own wrap is invisible). A PerThread's append writes the slot after the
// previous one, as MySQL's index does; a Global's writes slot ticket mod M,
// computed with a multiplication instead of a division (divisor.go).
//
// A slot's version word holds the ticket of its row and a state:
//
//	 63                                            2 1 0
//	+-----------------------------------------------+---+
//	|           ticket (62 bits, mod 2^62)          |st |
//	+-----------------------------------------------+---+
//	st = 0 free       never written since construction
//	st = 1 dirty      a writer owns the slot and is storing cells
//	st = 2 committed  the cells hold the row of ticket
//
// Ticket comparisons are modular: a is older than b when b-a mod 2^62 is in
// (0, 2^61). The ticket plays the part of pfs_lock's version (it never goes
// back, so an ABA needs 2^62 appends) and replaces MySQL's index and full
// flag for readers: a reader knows a row's age from its version alone.
//
// Each ring also keeps a head (the next ticket: a PerThread's owner publishes
// it in an owned cell at Begin, a Global's is its counter) and a base (the
// oldest ticket Reset left visible, an atomic.Uint64 only Reset writes). A
// reader shows the rows whose ticket is in [max(base, head-size), head).
//
// # Who owns a slot when
//
//	free or committed  nobody; readers may copy it; a writer may claim it
//	dirty(t)           the writer of ticket t, from its claim to its Commit
//
// A PerThread's owner claims its next slot with Swap: the slot holds a row
// of its own. A Global's writer claims slot s for ticket t with a CAS from
// the value it loaded, and only if that value is free, or committed with a
// ticket older than t. Cells and ref cells are stored only by the slot's
// owner, so every owned.Uint64 has one writer at a time, as the owned
// contract requires.
//
// # Collisions (Global)
//
// Two writers land on one slot when one of them (ticket t) is descheduled
// while the others take M more tickets (t+M lands on t's slot). Three cases,
// all decided by the version word:
//
//   - t+M claims the slot while t is still writing it (dirty(t)): t+M is
//     dropped. Overwriting would put two writers on the same cells and a
//     reader could validate a row mixed from both, since the version would
//     say committed(t+M) whatever t stored meanwhile.
//   - t claims the slot after t+M committed: t is dropped. Its row is older
//     than the row in the slot and already outside any reader's window.
//   - t claims the slot before t+M arrives: t+M finds it dirty, first case.
//
// A dropped append is counted in Lost (the events_*_history_long lost count
// a table can show) and Begin returns a discard slot. Dropping is the only
// choice that keeps writers from ever waiting and readers from ever seeing a
// torn row. With M = 10,000 it needs a writer descheduled mid-append while
// 10,000 other appends happen; with M = 2 and more writers than cores it is
// common (TestGlobalConcurrentSafe logs the rate).
//
// # Writing, step by step
//
//	    writer (ticket t, slot s)               slot s version word
//	                                            committed(t-M) or free
//	1.  t = next.Add(1)-1        (Global)       PerThread: t = head
//	2.  v = seq[s].Load()        (Global)
//	    v dirty, or committed(>= t): Lost++, return a discard slot
//	3.  seq[s].CAS(v, dirty(t))  (Global)  ->  dirty(t)
//	    seq[s].Swap(dirty(t))    (PerThread; a plain store on amd64,
//	                              see owned.BeginStore); head = t+1
//	    CAS failed: another writer moved; back to 2
//	4.  cells[s*w .. s*w+w-1].Set(...)          dirty(t)   plain stores
//	    refs[s*r .. s*r+r-1].Store(...)         dirty(t)   atomic stores,
//	                                                       only where changed
//	5.  seq[s].Store(committed(t))         ->  committed(t)   (owned.EndStore)
//
//	    reader
//	a.  b = base.Load(); h = head.Load(); lo = h - min(N, h-b)
//	b.  for each slot: v1 = seq.Load(); committed and ticket >= lo?
//	c.      copy the cells and ref cells with Load; v2 = seq.Load();
//	        keep if v1 == v2 (a copy not kept is overwritten by the next)
//	d.  b' = base.Load(); h' = head.Load(); keep tickets in [max(lo, b'), h')
//	e.  order the kept rows by ticket, oldest first; each row's refs move
//	    with it, and the ref slots of rows not kept are cleared
//
// # Ordering guarantees
//
// In Go memory model words: the Store of committed(t) in step 5 synchronizes
// before every Load in step b that observes it, so a reader that keeps a row
// has copied the values its writer stored in step 4, and the same values
// whatever it loaded in step c (the closing load in step c observing the same
// word proves no claim of the slot came between). That a cell load in step c
// cannot observe a store of a later claim without the closing load observing
// that claim is the owned package's argument (internal/owned/doc.go): the
// claim in step 3 is an atomic read-modify-write, so on arm64 (SWPAL, CASAL)
// no cell store of step 4 is performed before it, on amd64 stores are not
// reordered; readers load cells atomically (LDAR on arm64), so no cell load
// is performed after the closing version load.
//
// Ref cells follow the same argument with atomic stores in place of plain
// ones: a ref store of step 4 is a release store (STLR on arm64, XCHG on
// amd64), performed after the claim before it; the commit of step 5 is
// performed after it; readers load ref cells with atomic loads between
// their two version loads, as they load words. So a reader that keeps a row
// keeps exactly the refs appended with it: the refs of one AppendRefs, or
// nil refs for a row of Append or Begin.
//
// What a reader returns: every row it returns was in the ring, whole, at
// some instant during the call, and its rows come oldest first. A row
// committed before the call whose ticket is among the last size tickets and
// which no append overwrites before the call returns is returned. Rows
// appended during the call may or may not be; rows being written are skipped
// (MySQL skips them too). Within a thread, rows come in the order the thread
// appended them; across threads, in ticket order, which is the order in which
// appends took their tickets, not the order in which their events ended.
//
// Reset (TRUNCATE) moves base to the head it loads, with a CAS loop that
// never moves base back, so concurrent Resets keep the latest cut. It writes
// no slot and no cell: it is safe against concurrent readers, writers and
// Resets, costs O(1), and never takes a slot away from its owner. A reader
// that started before Reset may return rows Reset cut (it is ordered before
// the Reset), but never together with rows appended after Reset returned: a
// read that copied such a row loads base again after its scan, sees the
// Reset, and drops the rows it cut (TestReadNeverMixesResetConcurrentSafe).
// Every append whose ticket was taken before Reset loaded the head is cut,
// including one in progress: a PerThread publishes a ticket at Begin, a
// Global at its counter increment. MySQL's TRUNCATE writes every
// slot and resets the index instead, racing the writers that own them.
//
// # Refs
//
// A ref cell is an owned.Pointer: whatever it points to, the collector
// treats it as a pointer into that object. Its writer is the slot's, inside
// the slot's version bracket, and stores it as it stores the words: a plain
// store, through the write barrier, with no locked instruction. AppendRefs
// takes the pointers as unsafe.Pointer (a caller passes unsafe.StringData of
// a string, say) and keeps them, not the slice that holds them, so the
// slice may be an array on the caller's stack and AppendRefs allocates
// nothing. A writer stores a cell only when its value changes, and the
// schema or digest text of a slot's new row is often the one its old row
// had.
//
// A reader loads a ref as it loads a word, and may load a pointer that a
// writer overwrites a moment later; that is safe for the collector, whose
// write barrier shades the pointer a store overwrites, so a pointer a
// goroutine has loaded stays valid for as long as the goroutine holds it. A
// copy that the closing version load rejects is dropped, refs with it; the
// ref slots of dstRefs that no returned row uses are cleared before
// AppendRowsRefs returns, so a caller's buffer does not keep their targets
// alive.
//
// Memory: a ref keeps its target alive until its slot is overwritten (by
// AppendRefs with another pointer, or by Append or Begin, which store nil).
// A ring of N rows keeps up to N rows' targets alive: for a statement
// history, N SQL texts. Reset writes no slot, so a truncated ring keeps the
// targets of the rows it cut alive until appends overwrite their slots;
// that is accepted, as it keeps Reset O(1) and free of races with writers.
//
// # Accepted races and limits
//
//   - Under the race detector owned cells are stored atomically; in normal
//     builds they are plain stores that race, by the Go memory model's
//     letter, with readers' atomic loads. The owned package explains why this
//     is sound on amd64 and arm64 and why -race stays quiet without
//     suppressions.
//   - A PerThread's head is an owned cell: a reader may load a head a little
//     behind the owner. It then shows slightly fewer rows, never wrong ones.
//   - A Global's slot is ticket mod M. Where the 2^62 ticket circle wraps,
//     ticket mod M jumps unless M is a power of two, so for one lap a few
//     rows may be missing (never torn or misordered): once per 2^62 appends.
//     MySQL's 32-bit index has the same jump every 2^32 appends.
//   - A writer that Begins and never Commits leaves its slot dirty. A
//     PerThread's next lap takes it back. A Global's slot stays dirty for
//     good, since no other writer can tell a dead writer from a slow one:
//     every later append that lands there is dropped and counted in Lost.
//     Callers must Commit every Slot they Begin (Append always does).
//   - Readers do not wait for writers and writers never wait for anybody. A
//     reader racing a writer that laps a tiny ring during its scan may
//     return few rows.
//
// # Rejected designs
//
//   - MySQL's plain memcpy and sanitize-on-read: Go readers would race with
//     the writer on every word, and a row of two laps could pass.
//   - Atomic stores for every cell: 5-8 ns each (XCHG on amd64), 80 ns a
//     row, against 15 ns for a PerThread append here.
//   - One ring-wide seqlock: one slow reader or writer would invalidate every
//     copy, and a Global's writers would serialize on it.
//   - A Global writer that waits for a dirty slot: a descheduled writer
//     would block the process's instrumentation.
//   - Rounding M up to a power of two to avoid the division: up to twice the
//     memory and not the size the user configured; the multiply costs as
//     much as a mask.
//   - Rows in sync.Mutex: 16 ns per lock, contended in a Global.
//   - Refs as uintptr words among the row's words: the collector would not
//     see them, would free the text, and a reader would read reused memory.
//   - Refs in a side table owned by pfscore (say a map from ticket to text),
//     pruned as rows leave the ring: a lock or a second protocol, and
//     allocations on the write side.
//   - Plain pointer stores for refs inside the dirty window, as owned does
//     for words: the compiler still emits the write barrier, and on amd64
//     owned's ordering argument would carry over, for about 30 ns less with
//     four changed refs; but they would need owned's race-build split and a
//     pointer cell type in owned, and an argument of their own on arm64. The
//     atomic stores keep refs within sync/atomic's contract, and a cell whose
//     value does not change is not stored at all.
//
// # Cost
//
// On the 2-core EPYC of DESIGN.md, for 12-word rows (bench/rings_bench_test.go):
// PerThread.Append about 15 ns (two locked instructions and 12 stores),
// Global.Append about 25-30 ns from one goroutine (a third locked
// instruction for the ticket), both 0 allocs/op. Begin/Set/Commit writes the
// same words but costs more (about 50 ns): the caller spills the Slot and
// reloads it with wider moves that miss store forwarding, so prefer Append
// when the row is at hand. AppendRows of a full 10,000-row ring costs about
// 20 ns a row.
//
// Refs, on a 2-core Xeon VM where PerThread.Append of a 16-word row costs
// about 27 ns and Global.Append about 57 ns (rings/rings_bench_test.go, 16
// words and 4 refs): AppendRefs costs about 40-55 ns more when all four refs
// change (each changed ref is a runtime call, a write barrier check and an
// XCHG), and 8-15 ns more when none does (four loads and compares), 0
// allocs/op either way. Append on a ring with refs costs the same loads, and
// a store only for a ref that was not nil. AppendRowsRefs costs about 25 ns
// a row more than AppendRows for four refs.
//
// # Imports
//
// The standard library (sync/atomic; unsafe for the ref cells' pointers and
// the padding) and otelpfs's internal/owned only: rings is a leaf of
// otelpfs's dependency graph.
package rings
