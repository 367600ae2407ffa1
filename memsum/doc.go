// Package memsum keeps memory statistics as the performance_schema memory
// summary tables show them: allocation and free counts and bytes, current
// values with low and high water marks, roll-ups from threads to accounts,
// users, hosts and the global row, and TRUNCATE semantics.
//
// It is the arithmetic only: pfscore keeps one Stat per (thread, memory
// class), one Shared per (account|user|host, class) and one global Shared per
// class, and sums them into the rows of memory_summary_by_thread_by_event_name,
// _by_account_, _by_user_, _by_host_ and memory_summary_global_by_event_name.
//
// # Types
//
//	Row         one row's ten columns; Add (worst-case sum), Global (LOW >= 0),
//	            Rebase (what TRUNCATE leaves), Valid (the invariants)
//	Counts      the raw form: four totals and four capacities; Row, Add,
//	            Rebase, Partial (live roll-up), Reassign (dead thread roll-up)
//	Stat        single writer (a thread's), seqlocked: Alloc, Free, Drain by
//	            its owner; Load, TryLoad, LoadCounts, Version by anyone
//	Shared      many writers, atomic counters: Alloc, Free (no-thread path),
//	            ApplyAllocDelta, ApplyFreeDelta (carries), Aggregate,
//	            MoveBalanced, Rebase, Load, LoadCounts
//	AllocDelta, FreeDelta   a new high or low to carry to the parents
//
// All exported functions are safe for concurrent use unless stated: Stat's
// Alloc, Free and Drain are owner only; Row and Counts are plain values.
//
// # Invariants
//
// A statistic is MySQL's eight counters (Counts): the totals AllocCount,
// FreeCount, AllocSize, FreeSize, and the capacities, the headroom between
// CURRENT and the marks. Every row derived from them satisfies
//
//	CURRENT = ALLOC - FREE                (modulo 2^64, as int64)
//	LOW     = CURRENT - FreeCapacity  <= CURRENT
//	HIGH    = CURRENT + AllocCapacity >= CURRENT
//
// because capacities are never negative (a Shared's are clamped at zero when
// read, see Shared). Sums of rows keep the invariants. The reference's
// guarantee, LOW <= the lowest and HIGH >= the highest usage since the last
// TRUNCATE, holds for every group of sources that the carries run through
// (below); TestModel checks it against a simple model.
//
// # Per-thread update rules (Stat.Alloc, Stat.Free)
//
// Alloc(size), MySQL's count_alloc: COUNT_ALLOC += 1, SUM_NUMBER_OF_BYTES_ALLOC
// += size, so CURRENT grows by one block and size bytes; if CURRENT passes
// HIGH, HIGH follows and the distance it moved is returned as an AllocDelta
// (MySQL: what the alloc capacity could not absorb). LOW does not move.
// Free is the mirror, returning a FreeDelta for a new LOW. In the steady
// state (usage within its marks) both return a zero delta. Counts and bytes
// are independent: a free may make a new byte low and no new count low.
//
// A Stat stores the marks themselves rather than MySQL's capacities, so an
// operation within the marks stores two cells (a total count and a total
// size) between the two version bumps; Counts, the form that moves between
// sources, keeps MySQL's capacities. Both give the same rows and deltas
// (TestStatRules).
//
// A thread may free memory that another thread allocated (ownership moving
// between threads, or the engine charging a free to the thread that runs it):
// its CURRENT and LOW go negative. The columns are signed for that reason; a
// per-thread, account, user or host row may show negative values, the
// global row (Row.Global) never shows a negative LOW, and the global CURRENT,
// a sum over every source, is the true usage.
//
// # Carry
//
// Totals are not pushed to the parents: a parent's row is the sum of its own
// Shared and of its live children's rows, taken when read. Only mark
// expansions are pushed, eagerly: a non-zero AllocDelta goes to the first
// parent's ApplyAllocDelta, which absorbs what its own alloc capacity can
// (headroom left by children that ended or were rolled up, and are now below
// their peak) and returns the rest for the next parent. The engine carries
// along MySQL's path: the account; its remainder to the user (whose
// remainder is dropped) and to the host, whose remainder goes to the global
// Shared; a thread with no account carries to its user and host, or to the
// global Shared. The top drops what is left.
//
// Why the marks stay sound: for the sources a group sums, let
// H = sum of (CURRENT + AllocCapacity). An allocation of n in a child raises
// its CURRENT by n and lowers its capacity by n - delta, so H grows by delta
// minus what the group's Shareds on the carry path absorb, which is never
// more than delta; a free moves n from CURRENT to capacity and leaves H as it
// was. H never falls and is never below the group's CURRENT, so it is at
// least every CURRENT since the capacities were last zeroed. The same holds
// for L = sum of (CURRENT - FreeCapacity), downwards. A group must therefore
// sum exactly the sources whose carries pass through it before they leave
// it: an account row sums its threads and its Shared; a user row its
// threads, accounts and Shared; a host row likewise; the global row every
// thread, account and host and the global Shared, but not the users (their
// copy of a carry is a duplicate of the host's).
//
// # Roll-up when a thread ends
//
// The engine Drains the thread's Stat and moves its Counts up with
// Counts.Reassign (MySQL's memory_full_aggregate_with_reassign): if the
// thread freed at least as much as it allocated, everything goes to the
// parents; otherwise the parents get the balanced part and the high-mark
// capacity, the net allocation goes to the global Shared (the thread leaked
// it into caches another thread will free, against the global Shared), and
// the low-mark capacity is split, min(capacity, net) to the global Shared.
// Counts and bytes are split independently. The global row is unchanged by
// the move. A parent's row loses the net allocation from CURRENT and from
// HIGH, and up to the net from LOW: its marks then read as if the leaked
// memory had never been its own (that is MySQL's behavior; TestModel checks
// a parent's marks from the last reassignment on).
//
// # TRUNCATE
//
// TRUNCATE rebases every source (Counts.Rebase): the balanced part
// min(alloc, free) comes off both totals, counts and bytes separately, and
// the capacities become zero, so LOW = HIGH = CURRENT and CURRENT is
// unchanged. A row that is a sum shows COUNT_ALLOC and COUNT_FREE reduced by
// the same value (the sum of its sources' balanced parts).
//
// A Shared is rebased by the truncating goroutine (Shared.Rebase). A Stat
// cannot be, as only its owner writes it: the engine increments an epoch
// and passes it to every Stat call; an owner that sees a newer epoch rebases
// its Stat before its next Alloc or Free, and a reader that sees an older
// epoch in a Stat rebases its copy, the same way (see Stat). So TRUNCATE
// costs the provider one load and compare per operation and writes no
// other goroutine's cells.
//
// The engine should increment the epoch first and rebase the Shareds
// second: a row read in between sums rebased threads with not yet rebased
// parents, within the tolerance of any read concurrent with a TRUNCATE.
//
// # Differences from MySQL
//
//   - TRUNCATE is one rebase of every source. MySQL instead rolls live
//     sources up to their parents (memory_partial_aggregate: the balanced
//     part and the capacities move up, the net stays) and rebases the
//     global stats. For TRUNCATE of memory_summary_global_by_event_name
//     (which in MySQL truncates all five tables) the result is the same:
//     every moved part ends in a global stat and is rebased away there. For
//     TRUNCATE of one narrower table MySQL leaves the wider tables' rows as
//     they were; with a single epoch, every memory table is truncated. An
//     engine that wants MySQL's scope for account, user and host rows can
//     use Shared.MoveBalanced and Shared.Aggregate (the partial roll-up);
//     for thread rows it would need a second epoch, or a Stat that keeps
//     its rolled-up part apart until it ends (not built).
//   - MySQL's normalize also lowers the low-mark capacity by the frees of
//     sources that freed more than they allocated (missing_free_capacity),
//     which raises the global LOW; memsum only clamps it at zero (Row.Global),
//     a lower and always sound estimate.
//   - The optimistic subtraction of Shared's capacities adds back exactly
//     its own shortfall instead of storing zero, so no concurrent increment is
//     lost (see consume in shared.go).
//   - Under concurrency MySQL's per-thread stats are plain fields written by
//     the owner (and, on TRUNCATE, by the truncating thread) and read
//     without any check; memsum's readers get validated snapshots.
//
// # Imports
//
// The standard library and otelpfs's internal/owned only: memsum is a leaf
// of otelpfs's dependency graph.
package memsum
