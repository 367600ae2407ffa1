package main

// A mutation is a deliberate small bug: edits that turn correct engine code
// into code that still compiles but breaks one property the engine promises.
type mutation struct {
	area  string   // the package it breaks, for the progress line
	name  string   // a short stable id (matched by -run, shown by -list)
	desc  string   // what the bug is, in a few words
	edits []edit   // applied in order, each exactly once
	pkgs  []string // go test patterns, relative to the module root
	race  bool     // also run under -race if the plain run does not kill it
}

// An edit replaces old, which must occur exactly once in file, with new.
type edit struct {
	file     string // slash path relative to the module root
	old, new string
}

var (
	pfscorePkgs = []string{"./pfscore/", "./instrument/"}
	ringsPkgs   = []string{"./rings/", "./pfscore/"}
	// The container's own tests first, then the engine's, which use it.
	storePkgs = []string{"./internal/store/", "./pfscore/", "./instrument/"}
	// The OpenTelemetry side: the bridge's and the exporter's own tests.
	bridgePkgs   = []string{"./bridge/..."}
	exporterPkgs = []string{"./exporter/"}
	// pfshttp's pooled threads, and the engine's Settle under them.
	poolPkgs = []string{"./pfscore/", "./instrument/pfshttp/"}
)

// The block of actorsDisconnect that rolls the thread up into its rows.
const disconnectRollUp = "\ttargets := rows[:1]\n\tif t.acct == nil {\n\t\ttargets = rows[1:]\n\t}\n" +
	"\tfor _, r := range targets {\n\t\tif r != nil {\n\t\t\tr.rollUp(e, stats, x, t.threadCore, &t.trxStats)\n\t\t}\n\t}\n"

// The two loops of truncateSummary: baselines, then epochs.
const (
	truncRebase = "\tfor n, groups := range rebase {\n\t\tsummaries[n].rebase(s, groups)\n\t}\n"
	truncEpochs = "\tfor g := range numTruncGroups {\n\t\tif def.groups&(1<<g) != 0 {\n\t\t\ts.advanceEpoch(g)\n\t\t}\n\t}\n"
)

var mutations = []mutation{
	// Engine storage: seqlocked current rows, containers (internal/store), rings.
	{
		area: "pfscore", name: "copywaits-no-recheck", race: true, pkgs: pfscorePkgs,
		desc: "copyWaits accepts its copy without re-reading the guard word",
		edits: []edit{{"pfscore/table_events_waits.go",
			"if c.guard.Load() == g {",
			"if true {"}},
	},
	{
		area: "pfscore", name: "copywaits-busy", race: true, pkgs: pfscorePkgs,
		desc: "copyWaits accepts a guard word with a write section in progress",
		edits: []edit{{"pfscore/table_events_waits.go",
			"\t\tif g&guardBusy != 0 {\n\t\t\tcontinue\n\t\t}\n",
			""}},
	},
	{
		area: "pfscore", name: "leave-same-seq", race: true, pkgs: pfscorePkgs,
		desc: "Thread.leave restores the guard word without advancing its sequence",
		edits: []edit{{"pfscore/thread.go",
			"owned.EndStore(&t.guard, g&^seqMask|(g+guardSeq)&seqMask)",
			"owned.EndStore(&t.guard, g)"}},
	},
	{
		area: "pfscore", name: "endwait-leave-early", race: true, pkgs: pfscorePkgs,
		desc: "endWait closes its write section before closing the current row (END_EVENT_ID/TIMER_END/bytes)",
		edits: []edit{{"pfscore/events_waits.go",
			"\tif w.flags&wsEvent != 0 {\n\t\tt.endWaitEvent(w, end, bytes)\n\t}\n\tt.leave(g)",
			"\tt.leave(g)\n\tif w.flags&wsEvent != 0 {\n\t\tt.endWaitEvent(w, end, bytes)\n\t}"}},
	},
	{
		area: "store", name: "reclaim-no-rescan", race: true, pkgs: storePkgs,
		desc: "Reclaim unpublishes a page without step 3's re-scan of its records",
		edits: []edit{{"internal/store/container_reclaim.go",
			"// Step 3.\n\t\tif !p.allFree() {",
			"// Step 3.\n\t\tif false {"}},
	},
	{
		area: "store", name: "reclaim-store-not-cas", race: true, pkgs: storePkgs,
		desc: "Reclaim's step 2 sets retiring with a plain store, not a CAS",
		edits: []edit{{"internal/store/container_reclaim.go",
			"if !p.state.CompareAndSwap(w, w|pageRetiring) {",
			"if p.state.Store(w | pageRetiring); false {"}},
	},
	{
		area: "store", name: "page-full-unconditional", race: true, pkgs: storePkgs,
		desc: "page.allocate sets the full flag unconditionally (MySQL's page skip)",
		edits: []edit{{"internal/store/container_page.go",
			"p.state.CompareAndSwap(w, w|pageFull)",
			"p.state.Or(pageFull)"}},
	},
	{
		area: "store", name: "alloc-no-retry-new-pages", race: true, pkgs: storePkgs,
		desc: "allocateSlow does not retry pages created during the walk",
		edits: []edit{{"internal/store/container.go",
			"} else if c.gen.Load() != gen {",
			"} else if false && c.gen.Load() != gen {"}},
	},
	{
		area: "store", name: "grow-count-before-gen", race: true, pkgs: storePkgs,
		desc: "grow raises the published count before it stores the new generation (an allocator sees the table at MaxPages and its old generation: a spurious loss)",
		edits: []edit{{"internal/store/container.go",
			"\tc.gen.Store(p.gen)\n\tc.published.Add(1)\n",
			"\tc.published.Add(1)\n\tc.gen.Store(p.gen)\n"}},
	},
	{
		area: "store", name: "alloc-forgets-retiring", race: true, pkgs: storePkgs,
		desc: "Allocate asks the page word whether it was retiring after page.allocate backed off, instead of keeping what page.allocate saw (the reclaimer may have cleared the bit)",
		edits: []edit{{"internal/store/container.go",
			"retiring = retiring || ret",
			"retiring = retiring || ret && p.state.Load()&pageRetiring != 0"}},
	},
	{
		area: "rings", name: "perthread-no-base-filter", race: true, pkgs: ringsPkgs,
		desc: "PerThread.AppendRows drops the post-scan base filter (a Reset during the scan goes unseen)",
		edits: []edit{{"rings/perthread.go",
			"return r.tb.appendRows(dst, &r.base, r.head.Load)",
			"var b atomic.Uint64\n\tb.Store(r.base.Load())\n\treturn r.tb.appendRows(dst, &b, r.head.Load)"}},
	},
	{
		area: "rings", name: "global-no-base-filter", race: true, pkgs: ringsPkgs,
		desc: "Global.AppendRows drops the post-scan base filter (a Reset during the scan goes unseen)",
		edits: []edit{{"rings/global.go",
			"return g.tb.appendRows(dst, &g.base, g.head)",
			"var b atomic.Uint64\n\tb.Store(g.base.Load())\n\treturn g.tb.appendRows(dst, &b, g.head)"}},
	},
	// Not planted: dropping appendRows' post-scan head filter. Every row a
	// scan copies was committed after the head it read was published, so
	// short of ticket wraparound the filter drops nothing (an equivalent
	// mutant).

	// The layer above: threads, summaries, TRUNCATE.
	{
		area: "pfscore", name: "instancestats-no-instmu", race: true, pkgs: pfscorePkgs,
		desc: "instanceStats reads without instMu",
		edits: []edit{{"pfscore/table_summary.go",
			"\ts.instMu.Lock()\n\tdefer s.instMu.Unlock()\n\tout := make([]statRow, len(classes))",
			"\tout := make([]statRow, len(classes))"}},
	},
	{
		area: "pfscore", name: "endedandlive-no-endmu", race: true, pkgs: pfscorePkgs,
		desc: "endedAndLive reads ended totals and live threads without endMu",
		edits: []edit{{"pfscore/table_summary.go",
			"\ts.endMu.Lock()\n\tdefer s.endMu.Unlock()\n\treturn loadShared(",
			"\treturn loadShared("}},
	},
	{
		area: "pfscore", name: "end-split-endmu", race: true, pkgs: pfscorePkgs,
		desc: "End unlocks endMu between the roll-up and clearing threadObjs",
		edits: []edit{{"pfscore/thread.go",
			"s.rollUpEndedLocked(stats, x, t.threadCore, &t.trxStats)\n\ts.threadObjs[t.rec.Index()].Store(nil)",
			"s.rollUpEndedLocked(stats, x, t.threadCore, &t.trxStats)\n\ts.endMu.Unlock()\n\ts.endMu.Lock()\n\ts.threadObjs[t.rec.Index()].Store(nil)"}},
	},
	{
		area: "pfscore", name: "end-free-before-unlist", race: true, pkgs: pfscorePkgs,
		desc: "End frees the thread's record before the endMu section unlists it",
		edits: []edit{
			{"pfscore/thread.go",
				"\ts.endMu.Lock()\n\ts.rollUpEndedLocked(stats, x, t.threadCore, &t.trxStats)",
				"\ts.threads.Free(t.rec)\n\ts.endMu.Lock()\n\ts.rollUpEndedLocked(stats, x, t.threadCore, &t.trxStats)"},
			{"pfscore/thread.go",
				"\ts.memMoveEnd()\n\ts.threads.Free(t.rec)\n",
				"\ts.memMoveEnd()\n"},
		},
	},
	{
		area: "pfscore", name: "growstats-no-copy", pkgs: pfscorePkgs,
		desc: "growStats drops the earlier statistics (skips its copy loop)",
		edits: []edit{{"pfscore/thread.go",
			"for j := range old { // the only writer: a plain copy is exact",
			"for j := range old[:0] { // the only writer: a plain copy is exact"}},
	},
	{
		area: "pfscore", name: "livethreads-skip-ended", race: true, pkgs: pfscorePkgs,
		desc: "liveThreads also skips threads whose Thread.ended is set",
		edits: []edit{{"pfscore/table_threads.go",
			"if t := s.threadObjs[i].Load(); t != nil {",
			"if t := s.threadObjs[i].Load(); t != nil && !t.ended.Load() {"}},
	},
	{
		area: "pfscore", name: "takecore-ignore-readers", race: true, pkgs: pfscorePkgs,
		desc: "takeCore recycles storage while readers are active",
		edits: []edit{{"pfscore/thread.go",
			"if s.readers.Load() == 0 {",
			"if true {"}},
	},
	{
		area: "pfscore", name: "enter-no-cas", race: true, pkgs: pfscorePkgs,
		desc: "Thread.enter checks the guard with a load instead of a CAS (no busy bit)",
		edits: []edit{{"pfscore/thread.go",
			"if g&^seqMask == t.owner && t.guard.CompareAndSwap(g, g|guardBusy) {",
			"if g&^seqMask == t.owner {"}},
	},
	{
		area: "pfscore", name: "disconnect-add-after-unlock", race: true, pkgs: pfscorePkgs,
		desc: "actorsDisconnect rolls the thread up into its rows after unlocking them",
		edits: []edit{
			{"pfscore/accounts.go", disconnectRollUp, ""},
			{"pfscore/accounts.go",
				"\t\t\trows[i].mu.Unlock()\n\t\t}\n\t}\n}\n",
				"\t\t\trows[i].mu.Unlock()\n\t\t}\n\t}\n" + disconnectRollUp + "}\n"},
		},
	},
	{
		area: "pfscore", name: "global-rereads-classes", race: true, pkgs: pfscorePkgs,
		desc: "the global summary loops over a second load of the class list (defect A)",
		edits: []edit{{"pfscore/family.go",
			"\t\t\tfor _, i := range m.idx {\n\t\t\t\tc := m.classes[i]\n\t\t\t\tout = append(out, sumEntry[ByEventName, S]",
			"\t\t\tfor _, i := range f.members(s).idx {\n\t\t\t\tc := s.Classes()[i]\n\t\t\t\tout = append(out, sumEntry[ByEventName, S]"}},
	},
	{
		area: "pfscore", name: "aggregate-ignores-epoch", pkgs: pfscorePkgs,
		desc: "ownedStat.aggregate compares MIN/MAX values only, not their epoch tags",
		edits: []edit{
			{"pfscore/stat.go",
				"if mn&^extMask != tag || v < mn&extMask {",
				"if mn == 0 || v < mn&extMask {"},
			{"pfscore/stat.go",
				"if mx&^extMask != tag || v > mx&extMask {",
				"if mx == 0 || v > mx&extMask {"},
		},
	},
	// Not planted: endWaitEvent's EVENT_ID check. Write sections are
	// exclusive and a level's depth drops only past ended waits, so no
	// level is reused while its event is open: the check is defensive
	// code no test can reach (an equivalent mutant).
	{
		// Moving the threadObjs store alone changes next to nothing:
		// liveThreads visits only ALLOCATED records, and the record becomes
		// ALLOCATED last. So the thread is published as a whole (threadObjs
		// and DirtyToAllocated) before its guard, mask and actor rows.
		area: "pfscore", name: "newthread-publish-early", race: true, pkgs: pfscorePkgs,
		desc: "NewThread publishes the thread (threadObjs, ALLOCATED) before setting its guard",
		edits: []edit{
			{"pfscore/thread.go",
				"\tc.guard.Store(t.owner) // the storage is t's from here on\n",
				"\ts.threadObjs[rec.Index()].Store(t)\n\trec.Lock.DirtyToAllocated(d)\n\tc.guard.Store(t.owner) // the storage is t's from here on\n"},
			{"pfscore/thread.go",
				"\ts.actorsConnect(t)\n\n\ts.threadObjs[rec.Index()].Store(t)\n\trec.Lock.DirtyToAllocated(d)\n\treturn t",
				"\ts.actorsConnect(t)\n\treturn t"},
		},
	},
	{
		area: "pfscore", name: "truncate-epochs-first", race: true, pkgs: pfscorePkgs,
		desc: "truncateSummary advances the epochs before taking baselines",
		edits: []edit{{"pfscore/table_summary.go",
			truncRebase + truncEpochs,
			truncEpochs + truncRebase}},
	},
	// The table layer: typed rows, summary families, baselines.
	{
		area: "pfscore", name: "rowkey-actor-no-id", pkgs: pfscorePkgs,
		desc: "actor summaries key their baselines by class only, not by the actor row",
		edits: []edit{{"pfscore/family.go",
			"key: rowKey{r.id, i}",
			"key: rowKey{0, i}"}},
	},
	{
		area: "pfscore", name: "family-user-no-cascade", pkgs: pfscorePkgs,
		desc: "TRUNCATE of a by_user summary leaves by_account as it was",
		edits: []edit{{"pfscore/family.go",
			"defineSummary(byUser, groupsThreads, []string{byThread, byAcct},",
			"defineSummary(byUser, groupsThreads, []string{byThread},"}},
	},
	{
		area: "pfscore", name: "baseline-skips-hidden", pkgs: pfscorePkgs,
		desc: "actor summaries leave hidden rows out of the raw read, so a rebase drops their baselines",
		edits: []edit{{"pfscore/family.go",
			"\t\t\thidden := r.hiddenInSummary()\n",
			"\t\t\thidden := r.hiddenInSummary()\n\t\t\tif hidden {\n\t\t\t\tcontinue\n\t\t\t}\n"}},
	},
	{
		area: "pfscore", name: "copystage-no-recheck", race: true, pkgs: pfscorePkgs,
		desc: "copyStage accepts its copy without re-reading the row's sequence",
		edits: []edit{{"pfscore/events_stages.go",
			"\t\tfor i := range c.stageRow.cells {\n\t\t\tdst[i] = c.stageRow.cells[i].Load()\n\t\t}\n\t\tif c.stageRow.seq.Load() == v {",
			"\t\tfor i := range c.stageRow.cells {\n\t\t\tdst[i] = c.stageRow.cells[i].Load()\n\t\t}\n\t\tif true {"}},
	},
	{
		area: "pfscore", name: "plan-null-ignored", pkgs: pfscorePkgs,
		desc: "a row plan renders a null column's zero value instead of NULL",
		edits: []edit{{"pfscore/columns.go",
			"if f.null && zero {",
			"if false && zero {"}},
	},
	{
		area: "pfscore", name: "plan-valid-ignored", pkgs: pfscorePkgs,
		desc: "a row plan ignores valid=F (NUMBER_OF_BYTES, TIMER_* and END_EVENT_ID never NULL)",
		edits: []edit{{"pfscore/columns.go",
			"if f.index == nil || f.hasV && *(*bool)(unsafe.Add(base, f.valid)) == f.neg {",
			"if f.index == nil {"}},
	},
	// Statements, digests, histograms, transactions.
	{
		area: "pfscore", name: "copystmt-no-recheck", race: true, pkgs: pfscorePkgs,
		desc: "copyStmt accepts its copy without re-reading the row's sequence",
		edits: []edit{{"pfscore/events_statements.go",
			"\t\tif slot.seq.Load() == v {\n\t\t\treturn true\n\t\t}",
			"\t\tif true {\n\t\t\treturn true\n\t\t}"}},
	},
	{
		area: "pfscore", name: "rollup-no-stmt-counts", pkgs: pfscorePkgs,
		desc: "an ended thread's statement counters do not roll up into its account, user and host",
		edits: []edit{{"pfscore/accounts.go",
			"\taddOwnedCounts(&r.stmts, x, c.stmtUsed.list)\n",
			""}},
	},
	{
		area: "pfscore", name: "ended-no-trx", pkgs: pfscorePkgs,
		desc: "an ended thread's transactions leave the global transaction summary",
		edits: []edit{{"pfscore/accounts.go",
			"\taddOwnedCounts(&s.stmtEnded, x, c.stmtUsed.list)\n\tfor i := range trx {\n\t\ts.trxEnded[i].addRow(e, trx[i].load(e.tag))\n\t}\n",
			"\taddOwnedCounts(&s.stmtEnded, x, c.stmtUsed.list)\n"}},
	},
	{
		area: "pfscore", name: "digest-insert-no-recheck", race: true, pkgs: pfscorePkgs,
		desc: "a digest insert that loses the race for a slot moves on instead of comparing the winner's key",
		edits: []edit{{"pfscore/digests.go",
			"\t\t\tr = t.at(i) // another goroutine took the slot\n",
			"\t\t\tcontinue\n"}},
	},
	{
		area: "pfscore", name: "stmt-cache-way-by-hash", pkgs: pfscorePkgs,
		desc: "the statement cache places a new text by its hash alone: two texts of one set and way evict each other",
		edits: []edit{{"pfscore/digests.go",
			"\tif old := c.slots[w].Swap(e); old != nil {\n",
			"\t_ = w\n\tif old := c.slots[i+h>>63].Swap(e); old != nil {\n"}},
	},
	{
		area: "pfscore", name: "stmt-site-no-compare", pkgs: pfscorePkgs,
		desc: "the statement cache's site table trusts the text's address without comparing the text (a reused address finds another text's entry)",
		edits: []edit{{"pfscore/digests.go",
			"e.site.Load() == p && e.normalized == normalized && e.text == text {",
			"e.site.Load() == p && e.normalized == normalized {"}},
	},
	{
		area: "pfscore", name: "end-with-text-no-row", pkgs: pfscorePkgs,
		desc: "EndWithText changes the statement's digest but leaves the row's text as it was (the history shows the first text)",
		edits: []edit{{"pfscore/events_statements.go",
			"\tif st.meta&sfNewText != 0 {\n\t\tt.writeText(slot, st)\n\t}\n",
			""}},
	},
	{
		area: "pfssql", name: "rows-next-cycles-unconverted", pkgs: []string{"./instrument/pfssql/"},
		desc: "the rows' Close adds the raw cycles Next summed to DriverTime without converting them to picoseconds",
		edits: []edit{{"instrument/pfssql/rows.go",
			"\t\tw.next *= hwclock.Cycle.Factor() // the raw cycles Next summed, in ps\n",
			""}},
	},
	{
		area: "pfssql", name: "retry-keeps-stash-end", pkgs: []string{"./instrument/pfssql/"},
		desc: "a statement database/sql retries after driver.ErrBadConn keeps the end its failed attempt reached in the stash (it ends before its retry ran)",
		edits: []edit{{"instrument/pfssql/run.go",
			"r.errs, r.msg, r.cancelled, r.end = 0, \"\", false, 0",
			"r.errs, r.msg, r.cancelled = 0, \"\", false"}},
	},
	{
		area: "pfssql", name: "rows-close-untimed", pkgs: []string{"./instrument/pfssql/"},
		desc: "the rows' Close on the cycle counter forgets its own duration: the driver's time in Close counts as the application's (FETCH)",
		edits: []edit{{"instrument/pfssql/rows.go",
			"\t\t\tt0 = t1 - min(closing, t1-w.opened)\n",
			"\t\t\tt0 = t1 - min(closing, t1-w.opened)*0\n"}},
	},
	{
		area: "pfssql", name: "opctx-done-nil", pkgs: []string{"./instrument/pfssql/"},
		desc: "the DB level's context answers Done with nil (a cancelled caller's statement runs on)",
		edits: []edit{{"instrument/pfssql/run.go",
			"op: o, doneCh: ctx.Done()}",
			"op: o}"}},
	},
	{
		area: "pfscore", name: "settled-ignores-sections", pkgs: poolPkgs,
		desc: "Thread.Settled trusts a settled mark whatever ran on the thread since (a pooled thread's next request starts inside an event a kept handle began)",
		edits: []edit{{"pfscore/events_stages.go",
			"return t != nil && !t.ended.Load() && t.guard.Load() == mark",
			"return t != nil && !t.ended.Load()"}},
	},
	{
		area: "bridge", name: "span-holder-ids-unchecked", pkgs: []string{"./bridge/"},
		desc: "TraceContext takes a span holder's ids without OpenTelemetry's validity rule (a zero trace or span id counts as a span)",
		edits: []edit{{"bridge/spans.go",
			"\t\t\tif traceID == [16]byte{} || spanID == [8]byte{} {\n",
			"\t\t\tif false {\n"}},
	},
	{
		area: "pfshttp", name: "span-holder-without-span", pkgs: []string{"./instrument/pfshttp/"},
		desc: "a request's context tells the trace hook it holds a span when it holds none (its parent's span is hidden)",
		edits: []edit{{"instrument/pfshttp/threadctx.go",
			"\tif c.span.Span == nil {\n\t\treturn traceID, spanID, false, false\n\t}\n\treturn c.span.sc.TraceID(), c.span.sc.SpanID(), c.span.sc.IsSampled(), true",
			"\treturn c.span.sc.TraceID(), c.span.sc.SpanID(), c.span.sc.IsSampled(), true"}},
	},
	{
		area: "pfscore", name: "source-cache-stale", pkgs: pfscorePkgs,
		desc: "a class's SOURCE cache answers with its last id whatever the SOURCE",
		edits: []edit{{"pfscore/events_stages.go",
			"\tif e := c.source.Load(); e != nil && e.s == source {\n",
			"\tif e := c.source.Load(); e != nil {\n"}},
	},
	{
		area: "pfscore", name: "settle-ignores-transaction", pkgs: poolPkgs,
		desc: "Settle reports a thread with a transaction in progress settled: a pooled thread goes back with it",
		edits: []edit{{"pfscore/events_stages.go",
			"\tsettled = t.depth == 0 && t.stmtDepth == 0 && !t.trx.on\n",
			"\tsettled = t.depth == 0 && t.stmtDepth == 0\n"}},
	},
	{
		area: "pfscore", name: "pool-keeps-context-thread", pkgs: poolPkgs,
		desc: "a pooled request's context keeps its thread after the request",
		edits: []edit{{"instrument/pfshttp/handler.go",
			"\tq.ctx.t.Store(nil)\n",
			""}},
	},
	{
		area: "pfscore", name: "pool-get-no-settle", pkgs: poolPkgs,
		desc: "the pool hands out an idle thread without settling it again: an event a kept handle began is in progress in the next request",
		edits: []edit{{"instrument/pfshttp/pool.go",
			"\t\tif t := it.t; t == nil || t.Settled(it.mark) || t.Settle() {\n",
			"\t\tif t := it.t; t == nil || true {\n"}},
	},
	{
		area: "pfscore", name: "free-gives-up-when-busy", pkgs: poolPkgs,
		desc: "a free from another goroutine counts on the account when the thread is busy, not on the thread",
		edits: []edit{{"pfscore/memory.go",
			"\t\tif i%16 == 0 {\n\t\t\truntime.Gosched() // the section's goroutine was preempted in it\n\t\t}\n\t}\n}\n",
			"\t\treturn 0, false\n\t}\n}\n"}},
	},
	{
		area: "pfscore", name: "digest-truncate-keeps-table", pkgs: pfscorePkgs,
		desc: "TRUNCATE of the digest summary keeps the full table (and its NULL row)",
		edits: []edit{{"pfscore/table_digests.go",
			"\t\ts.digests.Store(newDigestTable(s.digestGen.Add(1), s.cfg.digestsSize, &s.digestLost))\n",
			""}},
	},
	{
		area: "pfscore", name: "quantile-floor", pkgs: pfscorePkgs,
		desc: "QUANTILE_95 targets the floor of n*0.95 instead of its ceiling",
		edits: []edit{{"pfscore/histogram.go",
			"t95, t99, t999 := (n*95+99)/100, (n*99+99)/100, (n*999+999)/1000",
			"t95, t99, t999 := n*95/100, (n*99+99)/100, (n*999+999)/1000"}},
	},
	{
		area: "pfscore", name: "histbucket-upper", pkgs: pfscorePkgs,
		desc: "a wait on a bucket's lower bound goes to the bucket below",
		edits: []edit{{"pfscore/histogram.go",
			"\t\tif histBounds[m] <= ps {",
			"\t\tif histBounds[m] < ps {"}},
	},
	{
		area: "pfscore", name: "sample-ignores-age", pkgs: pfscorePkgs,
		desc: "a digest's query sample is never replaced for its age",
		edits: []edit{{"pfscore/digests.go",
			"&& !(maxAge != 0 && end > cur.seen && end-cur.seen > maxAge)",
			""}},
	},
	{
		area: "pfscore", name: "mem-end-global", pkgs: pfscorePkgs,
		desc: "an ended thread's memory goes to the global row, not its account",
		edits: []edit{{"pfscore/memory.go",
			"\t\tif !a.memRemoved {\n\t\t\tf(a.mem.at(k))",
			"\t\tif !a.memRemoved {\n\t\t\tf(s.memGlobal.at(k))"}},
	},
	{
		area: "pfscore", name: "mem-end-outside-move", pkgs: pfscorePkgs,
		desc: "a thread's memory moves to its parents under the lock but without the sequence word readers validate",
		edits: []edit{
			{"pfscore/thread.go",
				"\ts.memMoveBegin() // memory readers see the thread live or moved, never both (memory.go)\n\ts.memEnd(t)\n",
				"\ts.memMoveMu.Lock()\n\ts.memEnd(t)\n"},
			{"pfscore/thread.go",
				"\ts.endMu.Unlock()\n\ts.memMoveEnd()\n",
				"\ts.endMu.Unlock()\n\ts.memMoveMu.Unlock()\n"},
		},
	},
	{
		area: "pfscore", name: "mem-no-carry", pkgs: pfscorePkgs,
		desc: "a thread's new high water mark is not carried to its parents",
		edits: []edit{{"pfscore/memory.go",
			"\t\t\tif !d.IsZero() {\n\t\t\t\ts.carryAlloc(t, k, d)\n\t\t\t}",
			"\t\t\t_ = d"}},
	},
	{
		area: "pfscore", name: "enter-no-foreign-wait", pkgs: pfscorePkgs,
		desc: "a thread's event is lost while another goroutine's free holds the guard",
		edits: []edit{{"pfscore/thread.go",
			"\t\tif g&guardForeign == 0 && g&^seqMask != t.owner {",
			"\t\tif g&^seqMask != t.owner {"}},
	},
	{
		area: "pfscore", name: "mem-removed-host-keeps-frees", pkgs: pfscorePkgs,
		desc: "an ended thread's free goes to its host row after TRUNCATE hosts removed it",
		edits: []edit{{"pfscore/memory.go",
			"\tif hst != nil && !hst.memRemoved {\n\t\tf(hst.mem.at(k))",
			"\tif hst != nil {\n\t\tf(hst.mem.at(k))"}},
	},
	{
		area: "pfscore", name: "null-row-first-before-last", pkgs: pfscorePkgs,
		desc: "the NULL digest row's FIRST_SEEN is set without moving LAST_SEEN first",
		edits: []edit{{"pfscore/digests.go",
			"\t\tfor l := null.last.Load(); now > l && !null.last.CompareAndSwap(l, now); l = null.last.Load() {\n\t\t}\n",
			""}},
	},
	{
		area: "pfscore", name: "mem-free-ignores-owner", pkgs: pfscorePkgs,
		desc: "a free counts only if the class is on now, not when its allocation counted",
		edits: []edit{{"pfscore/memory.go",
			"\tif o.how == memNone || c == nil || c.kind != KindMemory || !s.owns(c) {",
			"\tif o.how == memNone || !s.memClass(c) {"}},
	},

	// Table reads and the OpenTelemetry side.
	{
		area: "pfscore", name: "boxer-reuses-slot", pkgs: pfscorePkgs,
		desc: "the boxer writes each number into the slot of the one before: earlier Values change",
		edits: []edit{{"pfscore/box.go",
			"\tb.u = append(b.u, u)\n",
			"\tif len(b.u) == 0 {\n\t\tb.u = append(b.u, u)\n\t}\n\tb.u[len(b.u)-1] = u\n"}},
	},
	{
		area: "pfscore", name: "sample-trace-not-copied", pkgs: pfscorePkgs,
		desc: "a digest's query sample does not keep the span its statement ran in",
		edits: []edit{{"pfscore/events_statements.go",
			"\tif c[qMisc].Load()&qfHasTrace != 0 {\n\t\tspan.ok = true",
			"\tif false {\n\t\tspan.ok = true"}},
	},
	{
		area: "bridge", name: "merged-sum-no-restart", pkgs: bridgePkgs,
		desc: "a view-merged sum that lost a member goes down under the same StartTime",
		edits: []edit{{"bridge/views.go",
			"\tcase down:\n\t\tst.start = fresh\n",
			"\tcase down:\n"}},
	},
	{
		area: "bridge", name: "hist-lower-bound", pkgs: bridgePkgs,
		desc: "an engine bucket counts where its lower bound falls among the explicit bounds",
		edits: []edit{{"bridge/histograms.go",
			"up := Seconds(bounds[i+1])",
			"up := Seconds(bounds[i])"}},
	},
	{
		area: "bridge", name: "hist-back-from-now", pkgs: bridgePkgs,
		desc: "a digest back in the top N restarts its histogram at this collection, not as its sums",
		edits: []edit{{"bridge/histograms.go",
			"\t\tst.start, st.offCounts, st.offSum = fresh, slices.Clone(st.last), st.lastSum\n",
			"\t\tst.start, st.offCounts, st.offSum = now, slices.Clone(h.counts), b.Sum\n"}},
	},
	{
		area: "bridge", name: "series-keys-share-reads", pkgs: bridgePkgs,
		desc: "a series keeps its row's Values, which pin the read's boxed cells",
		edits: []edit{{"bridge/producer.go",
			"key: ownValues(vals),",
			"key: slices.Clone(vals),"}},
	},
	{
		area: "exporter", name: "shutdown-no-progress", pkgs: exporterPkgs,
		desc: "shutdown drops the queued spans without telling a waiting forceFlush",
		edits: []edit{{"exporter/traces.go",
			"\t\tp.finished += uint64(left)\n\t\tclose(p.progress)\n\t\tp.progress = make(chan struct{})\n",
			""}},
	},
	{
		area: "pfscore", name: "used-stats-unmarked", race: false, pkgs: pfscorePkgs,
		desc:  "a thread's by-class statistic is written without marking its class used: End never rolls it up",
		edits: []edit{{"pfscore/thread.go", "\tt.statsUsed.mark(i)\n", ""}},
	},
	{
		area: "pfscore", name: "used-stmt-unmarked", race: false, pkgs: pfscorePkgs,
		desc:  "a thread's statement counters are written without marking the kind used",
		edits: []edit{{"pfscore/stmt_stats.go", "\tt.stmtUsed.mark(k)\n", ""}},
	},
	{
		area: "pfscore", name: "used-mem-unmarked", race: false, pkgs: pfscorePkgs,
		desc:  "a thread's memory allocation is counted without marking the kind used: End never drains it",
		edits: []edit{{"pfscore/memory.go", "\t\t\tt.memUsed.mark(k)\n", ""}},
	},
	// Trace capture and the spans made of it (issue 27).
	{
		area: "pfscore", name: "capture-handoff-nested", race: true, pkgs: []string{"./pfscore/"},
		desc: "a nested statement's end hands the tree over, before its top statement ended",
		edits: []edit{{"pfscore/events_statements.go",
			"if b := t.capture; b != nil && level == 0 {",
			"if b := t.capture; b != nil {"}},
	},
	{
		area: "pfscore", name: "capture-recycle-keeps-tree", pkgs: []string{"./pfscore/"},
		desc: "a thread's storage taken up again keeps the tree its ended thread left",
		edits: []edit{{"pfscore/thread.go",
			"\tif b := c.capture; b != nil { // its thread ended within the tree\n\t\tc.capture = nil\n\t\tb.q.drop(b)\n\t}\n",
			""}},
	},
	{
		area: "pfscore", name: "capture-top-not-kept", pkgs: []string{"./pfscore/"},
		desc: "a tree past MaxEvents loses its top statement",
		edits: []edit{{"pfscore/capture.go",
			"\tif top || b.room() {",
			"\tif b.room() {"}},
	},
	{
		area: "bridge", name: "traces-sql-beside-stage", pkgs: bridgePkgs,
		desc: "a SQL statement's span is its statement's child, not the stage's it ran in",
		edits: []edit{{"bridge/traces.go",
			"\t\tif st := containingStage(ct.Stages, e); st != nil {",
			"\t\tif st := containingStage(ct.Stages, e); st != nil && false {"}},
	},
	{
		area: "bridge", name: "merged-hist-sum-down", pkgs: bridgePkgs,
		desc: "a merged histogram whose Sum went down keeps its StartTime",
		edits: []edit{{"bridge/views.go",
			" || sum < st.lastF || int64(p.Count) < st.lastI)",
			")"}},
	},
	{
		area: "bridge", name: "attrs-not-utf8", pkgs: bridgePkgs,
		desc: "a row's string attribute leaves as it is, invalid UTF-8 and all",
		edits: []edit{{"bridge/producer.go",
			"tp.keys[i].String(validString(x))",
			"tp.keys[i].String(x)"}},
	},
	{
		area: "bridge", name: "default-exports-all", pkgs: bridgePkgs,
		desc: "the default export is every summary, by thread and user included",
		edits: []edit{{"bridge/config.go",
			"filter: DefaultTables,",
			"filter: AllTables,"}},
	},
}
