package pfscore

import (
	"fmt"
	"testing"
)

// review22: recycle clears only the statement levels below stmtRowsUsed.
// Threads of different nesting depths take one storage in turn, with the
// current consumer switched between them; after each recycle, no level
// of the storage may hold a class or a ref of an earlier thread.
func TestReview22RecycleStatementLevels(t *testing.T) {
	f := newStmtFixture(t)
	depths := []int{3, 1, statementStackDepth + 2, 0, 2, 4, 1}
	var core *threadCore
	for round, depth := range depths {
		th := f.s.NewThread(f.thread, ThreadOptions{})
		if core != nil && th.threadCore != core {
			t.Skip("storage not reused (a reader was counted)")
		}
		core = th.threadCore
		for lvl := range statementStackDepth {
			sl := &core.stmtRows[lvl]
			if sl.cells[qClass].Load() != 0 {
				t.Errorf("round %d: level %d shows class %d of an earlier thread", round, lvl, sl.cells[qClass].Load())
			}
			for j := range sl.refs {
				if p := sl.refs[j].Load(); p != nil {
					t.Errorf("round %d: level %d ref %d still points at an earlier thread's string", round, lvl, j)
				}
			}
		}
		if cur := f.s.EventsStatementsCurrent(); len(cur) != 0 {
			t.Errorf("round %d: a new thread shows %d current statements: %+v", round, len(cur), cur)
		}
		// Alternate: current on for the odd levels only, then on for all.
		var sts []Statement
		for lvl := range depth {
			f.s.SetConsumer(ConsumerEventsStatementsCurrent, round%2 == 0 || lvl%2 == 1)
			sts = append(sts, f.s.StartStatement(th, f.sel, StatementInfo{Text: fmt.Sprintf("SELECT %d FROM r%d", lvl, round), Schema: fmt.Sprint("db", round), Source: fmt.Sprint("r.go:", round)}))
		}
		if depth > 1 {
			sts[depth-1].SetText(fmt.Sprintf("SELECT 'x' FROM late%d", round), false)
		}
		for i := len(sts) - 1; i >= 0; i-- {
			sts[i].End(StatementResult{Message: fmt.Sprint("m", round)})
		}
		f.s.SetConsumer(ConsumerEventsStatementsCurrent, true)
		th.End()
	}
}

// review22: statements and transactions intern SOURCE through their
// class's cache, which caches a SOURCE the full names table refused as 0.
// The rule (intern.go): such a SOURCE shows NULL on every event and
// counts in Performance_schema_names_lost once per change of the class's
// SOURCE, as stages always did (it counted once per event before). The
// review's test asserted once per event; it now asserts the documented
// rule, so that neither a lost count per event nor none at all passes.
func TestReview22NamesLostPerStatement(t *testing.T) {
	f := newStmtFixture(t, WithConsumer(ConsumerEventsTransactionsCurrent, true), WithConsumer(ConsumerEventsTransactionsHistory, true))
	th := f.s.NewThread(f.thread, ThreadOptions{})
	defer th.End()
	for i := 0; f.s.names.n.Load() < f.s.names.max; i++ {
		f.s.names.Intern(fmt.Sprint("filler", i))
	}
	lost := func() uint64 {
		for _, v := range f.s.Status() {
			if v.Name == "Performance_schema_names_lost" {
				return v.Value
			}
		}
		t.Fatal("no Performance_schema_names_lost")
		return 0
	}
	before := lost()
	const n = 5
	sources := []string{"refused.go:1", "refused.go:2", "refused.go:1"} // three changes of SOURCE
	for _, src := range sources {
		for range n {
			st := f.s.StartStatement(th, f.sel, StatementInfo{Text: "SELECT 1", Source: src})
			st.End(StatementResult{})
		}
	}
	for _, e := range f.s.EventsStatementsHistory() {
		if e.Source != "" {
			t.Errorf("SOURCE %q kept by a full names table", e.Source)
		}
	}
	if got := lost() - before; got != uint64(len(sources)) {
		t.Errorf("Performance_schema_names_lost grew by %d over %d changes of SOURCE, want %d", got, len(sources), len(sources))
	}
}
