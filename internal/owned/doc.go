// Package owned provides words that one owner writes with plain stores while
// any goroutine reads them with atomic loads: the storage cell of otelpfs's
// records, rings and statistics.
//
// # Why
//
// A performance_schema event writes a dozen words (timestamps, ids, byte
// counts) and must cost well under a hundred nanoseconds. On amd64 an atomic
// store compiles to XCHG, a locked instruction of 5-8 ns, so a record written
// with atomic stores costs about 80 ns; with plain stores bracketed by two
// atomic version bumps (a seqlock) about 13 ns, and bracketed by Seq's plain
// stores about 4 ns (BenchmarkStoreAtomic, BenchmarkSeqlockWrite*).
//
// # The contract
//
// A Uint64 has exactly one writer at a time: the goroutine that owns the record
// (a thread's own history ring, its current event, its statistics shard) or the
// goroutine that holds the record's version lock (pfscore's pfs_lock, a ring
// slot's sequence). Readers are anyone, at any time; they load with Load (an
// atomic load) and, where several words must agree, validate the copy with the
// guarding version word: a version read before and after the copy, both even
// and equal.
//
// # Why this is correct by the Go memory model
//
//   - Torn words: the Go memory model's implementation restrictions say a read
//     of a word-sized location observes a value some write stored there, never
//     a mixture. Every cell is one aligned 64-bit word.
//   - Ordering, writer side: the writer makes the version odd, stores the
//     cells, then makes it even (Seq, BeginStore, EndStore). On arm64 the
//     first step is an atomic read-modify-write (LDADDAL or SWPAL: acquire,
//     later stores cannot be performed before it) and the last an STLR or
//     LDADDAL (release: earlier stores are performed before it). On amd64
//     (total store order) stores become visible in program order, so both
//     steps are plain stores, made through a call the compiler does not
//     inline: it then neither drops the odd store as dead nor moves a cell's
//     store across it. A record write costs no locked instruction there.
//   - Ordering, reader side: readers use atomic loads for the cells as well as
//     for the version. On amd64 they are plain MOVs, free; on arm64 they are
//     LDAR, and acquire loads are not reordered with later loads, so every cell
//     load is performed before the closing version load. A plain load would
//     not be, on arm64: that is why readers never use one.
//
// # Race detector
//
// The race detector cannot know that a plain store is guarded by a version
// word, and would report it against a concurrent atomic load. Under -race
// (the race build tag) Set therefore compiles to an atomic store. The two
// builds differ only in the instruction that stores a cell, so -race tests
// still check everything else: that every concurrently read field is a cell,
// that readers validate, and that nothing else races. No suppressions are
// used anywhere.
package owned
