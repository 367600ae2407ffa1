package pfscore_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/digest"
	"github.com/otelpfs/otelpfs/pfscore"
)

// review22: statements of one class (statement/sql/select) from several
// goroutines at once, each with its own SOURCE, texts that differ only in
// their literals (so DIGEST_TEXT is shared through the cache's texts
// slots) in a tiny statement cache (evictions at every statement), while
// the digest table is truncated and statements_digest toggled. Every
// history row must show its own SOURCE and the DIGEST/DIGEST_TEXT of its
// own SQL_TEXT.
func TestReview22SourceAndDigestTextConcurrent(t *testing.T) {
	for _, cache := range []int{0, 2, 64} {
		t.Run(fmt.Sprint("cache", cache), func(t *testing.T) {
			s := hxNew(t,
				pfscore.WithConsumer(pfscore.ConsumerEventsStatementsCurrent, true),
				pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistory, true),
				pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, true),
				pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsCurrent, true),
				pfscore.WithConsumer(pfscore.ConsumerEventsTransactionsHistoryLong, true),
				pfscore.WithStatementsHistoryLongSize(4096),
				pfscore.WithStatementCacheSize(cache),
				pfscore.WithMaxDigestLength(64+cache), // a clipped digest for the long texts
			)
			tc := s.MustRegister("thread/review22/w")
			const workers = 4
			var wg, rwg sync.WaitGroup
			stop := make(chan struct{})
			rwg.Add(1)
			go func() { // TRUNCATE and consumer toggles meanwhile
				defer rwg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_ = s.Truncate("events_statements_summary_by_digest")
					if i%50 <= 1 {
						s.SetConsumer(pfscore.ConsumerStatementsDigest, i%50 == 1)
					}
				}
			}()
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					th := s.NewThread(tc, pfscore.ThreadOptions{User: "u", Host: "h"})
					defer th.End()
					for i := range 3000 {
						k := (w*7 + i) % 13
						text := fmt.Sprintf("SELECT a%d FROM t%d WHERE id = %d AND x IN (%d, 'lit%d')", k, k, i, w, i)
						if k%3 == 0 {
							text += strings.Repeat(" AND b = 1", 10)
						}
						src := fmt.Sprintf("w%d.go:%d", w, k)
						var tx pfscore.Transaction
						if i%5 == 0 {
							tx = s.StartTransaction(th, pfscore.TransactionInfo{Source: fmt.Sprintf("tx%d.go:%d", w, k)})
						}
						st := s.StartSQL(th, pfscore.StatementInfo{Text: text, Source: src})
						st.End(pfscore.StatementResult{})
						if i%5 == 0 {
							tx.End(true)
						}
					}
				}()
			}
			// Readers while it runs.
			rwg.Add(1)
			go func() {
				defer rwg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					review22CheckStatements(t, 64+cache, s.EventsStatementsHistoryLong())
					review22CheckStatements(t, 64+cache, s.EventsStatementsCurrent())
				}
			}()
			wg.Wait()
			close(stop)
			rwg.Wait()
			// The toggler may have been descheduled with the digest
			// consumer off while the workers ran their last statements
			// (CI once saw no digest in the 4,096 rows): a last batch with
			// it on, so that the rows checked below have digests.
			s.SetConsumer(pfscore.ConsumerStatementsDigest, true)
			th := s.NewThread(tc, pfscore.ThreadOptions{User: "u", Host: "h"})
			for i := range 200 { // as worker 0's
				k := i % 13
				text := fmt.Sprintf("SELECT a%d FROM t%d WHERE id = %d AND x IN (%d, 'lit%d')", k, k, i, 0, i)
				st := s.StartSQL(th, pfscore.StatementInfo{Text: text, Source: fmt.Sprintf("w0.go:%d", k)})
				st.End(pfscore.StatementResult{})
			}
			th.End()
			final := s.EventsStatementsHistoryLong()
			review22CheckStatements(t, 64+cache, final)
			withDigest := 0
			for _, e := range final {
				if e.Digest != "" {
					withDigest++
				}
			}
			if len(final) < 1000 || withDigest == 0 {
				t.Errorf("%d rows, %d with a digest: the test checked little", len(final), withDigest)
			}
			for _, e := range s.EventsTransactionsHistoryLong() {
				if e.Source == "" || !strings.HasPrefix(e.Source, "tx") {
					t.Errorf("transaction %d/%d: SOURCE %q", e.ThreadID, e.EventID, e.Source)
					break
				}
			}
		})
	}
}

var review22Norm sync.Map // [2]any{text, max} -> [2]string{DIGEST, DIGEST_TEXT}

func review22Digest(text string, max int) [2]string {
	if v, ok := review22Norm.Load([2]any{text, max}); ok {
		return v.([2]string)
	}
	r := digest.New(digest.WithMaxDigestLength(max), digest.WithPerformanceSchemaMaxDigestLength(max)).Normalize(text)
	v := [2]string{r.Digest.Hex(), string(r.Text)}
	review22Norm.Store([2]any{text, max}, v)
	return v
}

func review22CheckStatements(t *testing.T, maxDigest int, rows []pfscore.StatementEvent) {
	t.Helper()
	for _, e := range rows {
		if e.SQLText == "" {
			continue
		}
		var w, k, id, x int
		if _, err := fmt.Sscanf(e.SQLText, "SELECT a%d FROM t%d WHERE id = %d AND x IN (%d,", &k, &k, &id, &x); err != nil {
			t.Errorf("SQL_TEXT %q: %v", e.SQLText, err)
			return
		}
		w = x
		if want := fmt.Sprintf("w%d.go:%d", w, k); e.Source != want {
			t.Errorf("%q: SOURCE %q, want %q", e.SQLText, e.Source, want)
			return
		}
		if e.Digest == "" {
			continue // statements_digest was off
		}
		if want := review22Digest(e.SQLText, maxDigest); e.Digest != want[0] || e.DigestText != want[1] {
			t.Errorf("%q: DIGEST %s %q, want %s %q", e.SQLText, e.Digest, e.DigestText, want[0], want[1])
			return
		}
		if !strings.Contains(e.DigestText, fmt.Sprintf("`t%d`", k)) && !strings.Contains(e.DigestText, fmt.Sprintf("t%d", k)) {
			t.Errorf("%q: DIGEST_TEXT %q is another statement's", e.SQLText, e.DigestText)
			return
		}
		if strings.Contains(e.DigestText, "lit") {
			t.Errorf("%q: DIGEST_TEXT %q holds a literal", e.SQLText, e.DigestText)
			return
		}
	}
}

// review22: a statement text longer than the cache's bound (8 KiB: "a
// bulk INSERT, typically ... is normalized every time, as in MySQL,
// rather than kept in memory") gets an entry of its own, not cached. Its
// digest is now published in the cache's DIGEST_TEXT slots (texts) as
// &entry.dgOwn, an interior pointer that keeps the whole entry alive, its
// full SQL text with it, until another digest takes the slot. With
// statements_digest on and no history consumer, 64 bulk INSERTs of 1 MiB
// into 64 tables keep about 64 MiB alive after they ended; before the
// change, nothing kept them (rows and samples hold clipped copies).
func TestReview22LongTextsNotRetained(t *testing.T) {
	s := hxNew(t,
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsCurrent, false),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistory, false),
		pfscore.WithConsumer(pfscore.ConsumerEventsStatementsHistoryLong, false),
		pfscore.WithConsumer(pfscore.ConsumerStatementsDigest, true),
	)
	th := s.NewThread(s.MustRegister("thread/review22/bulk"), pfscore.ThreadOptions{})
	defer th.End()
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n, size = 64, 1 << 20
	row := "(123456789, 'abcdefghij'),"
	before := heap()
	for i := range n {
		var b strings.Builder
		b.Grow(size + 64)
		fmt.Fprintf(&b, "INSERT INTO bulk_%d (id, name) VALUES ", i)
		for b.Len() < size {
			b.WriteString(row)
		}
		b.WriteString("(0, '')")
		st := s.StartSQL(th, pfscore.StatementInfo{Text: b.String()})
		st.End(pfscore.StatementResult{RowsAffected: 1})
	}
	if rows := s.EventsStatementsSummaryByDigest(); len(rows) < n {
		t.Fatalf("%d digests, want %d", len(rows), n)
	}
	after := heap()
	runtime.KeepAlive(s)
	if grown := int64(after) - int64(before); grown > 8<<20 {
		t.Errorf("after %d statements of %d KiB, the heap holds %d MiB more: their texts are kept alive", n, size>>10, grown>>20)
	}
}
