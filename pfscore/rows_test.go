package pfscore_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

// rowsSchema is a schema with a row in most tables: every consumer on,
// threads of two users with waits, file and socket I/O, statements,
// transactions and memory, some of it ended.
func rowsSchema(t *testing.T) *pfscore.Schema {
	var opts []pfscore.Option
	for c := pfscore.ConsumerEventsStagesCurrent; c <= pfscore.ConsumerStatementsDigest; c++ {
		opts = append(opts, pfscore.WithConsumer(c, true))
	}
	s := hxNew(t, opts...)
	tc := s.MustRegister("thread/rows/worker")
	mutex := s.MustRegister("wait/synch/mutex/rows/m")
	file := s.MustRegister("wait/io/file/rows/data")
	sock := s.MustRegister("wait/io/socket/rows/client")
	mem := []*pfscore.Class{s.MustRegister("memory/rows/buf"), s.MustRegister("memory/rows/cache")}
	m := s.NewSyncInstance(mutex, "rows_test.go:1")
	f := s.FileInstance(file, "/rows/data.ibd", "rows_test.go:2")
	so := s.NewSocketInstance(sock, "tcp", "10.0.0.1:3306", "rows_test.go:3")
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 6 {
		th := s.NewThread(tc, pfscore.ThreadOptions{User: []string{"ann", "bob"}[i%2], Host: "localhost"})
		var held []hxAlloc
		for range 20 {
			for _, begin := range []func(*pfscore.WaitState) bool{
				func(w *pfscore.WaitState) bool { return m.BeginWait(w, th, pfscore.OpLock) },
				func(w *pfscore.WaitState) bool { return f.BeginWait(w, th, pfscore.OpFileRead) },
				func(w *pfscore.WaitState) bool { return so.BeginWait(w, th, pfscore.OpSocketSend) },
			} {
				var w pfscore.WaitState
				if begin(&w) {
					w.EndWait(int64(rnd.IntN(5000)))
				}
			}
			hxStatements(s, th, rnd)
			held = hxMemory(s, th, mem, held, rnd)
		}
		if i%3 == 0 {
			th.End()
		}
	}
	return s
}

// TestReadRowsAsSelect checks that ReadRows reads what Select does, table
// by table, cell by cell, on a schema nothing writes to meanwhile: Value
// is Select's cell, and the typed accessors agree with it.
func TestReadRowsAsSelect(t *testing.T) {
	s := rowsSchema(t)
	for _, name := range s.TableNames() {
		res, err := s.Select(name)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.ReadRows(name)
		if err != nil {
			t.Fatal(err)
		}
		if rows.Table() != name || len(rows.Columns()) != len(res.Columns) {
			t.Fatalf("%s: ReadRows: table %q, %d columns; Select: %d", name, rows.Table(), len(rows.Columns()), len(res.Columns))
		}
		if rows.Len() != len(res.Rows) {
			t.Errorf("%s: ReadRows: %d rows; Select: %d", name, rows.Len(), len(res.Rows))
			continue
		}
		for i, want := range res.Rows {
			for col, c := range res.Columns {
				w := want[col]
				if volatile(name, want) {
					// Not the same value twice: the same type, and the
					// typed accessors agree with Value.
					if got := rows.Row(i).Value(col); fmt.Sprintf("%T", got) != fmt.Sprintf("%T", w) {
						t.Errorf("%s row %d %s: Value %#v, Select %#v", name, i, c.Name, got, w)
					}
					w = rows.Row(i).Value(col)
				}
				if msg := checkCell(rows.Row(i), col, w); msg != "" {
					t.Errorf("%s row %d %s: %s", name, i, c.Name, msg)
				}
			}
		}
		// The same, through RowsOf.
		for i, want := range res.Rows {
			for col := range res.Columns {
				if msg := checkCell(pfscore.RowsOf(res).Row(i), col, want[col]); msg != "" {
					t.Errorf("%s: RowsOf: row %d column %d: %s", name, i, col, msg)
				}
			}
		}
	}
}

// volatile reports whether a row's cells may change from one read to the
// next on a schema nothing writes to: the timers' calibration, and the
// memory the engine and the Go runtime use, which reading changes.
func volatile(table string, row pfscore.Row) bool {
	if table == "performance_timers" {
		return true
	}
	if !strings.HasPrefix(table, "memory_summary_") {
		return false
	}
	for _, v := range row {
		if s, ok := v.(string); ok && (strings.HasPrefix(s, "memory/performance_schema/") || strings.HasPrefix(s, "memory/go/")) {
			return true
		}
	}
	return false
}

// checkCell returns what is wrong with cell col of r, which should be want.
func checkCell(r pfscore.RowView, col int, want pfscore.Value) string {
	if got := r.Value(col); got != want {
		return fmtMismatch("Value", got, want)
	}
	if !r.Is(col, want) {
		return fmtMismatch("Is false for", want, want)
	}
	if r.Null(col) != (want == nil) {
		return fmtMismatch("Null", r.Null(col), want == nil)
	}
	u, uok := r.Uint(col)
	i, iok := r.Int(col)
	str, sok := r.String(col)
	wu, wuok := want.(uint64)
	wi, wiok := want.(int64)
	ws, wsok := want.(string)
	switch {
	case u != wu || uok != wuok:
		return fmtMismatch("Uint", []any{u, uok}, want)
	case i != wi || iok != wiok:
		return fmtMismatch("Int", []any{i, iok}, want)
	case str != ws || sok != wsok:
		return fmtMismatch("String", []any{str, sok}, want)
	}
	// Is is false for any other value.
	for _, other := range []pfscore.Value{nil, uint64(1 << 40), int64(-7), "other", uint64(0), ""} {
		if other != want && r.Is(col, other) {
			return fmtMismatch("Is true for", other, want)
		}
	}
	return ""
}

func fmtMismatch(what string, got, want any) string {
	return what + ": got " + fmtAny(got) + ", want " + fmtAny(want)
}

func fmtAny(v any) string { return fmt.Sprintf("%#v", v) }
