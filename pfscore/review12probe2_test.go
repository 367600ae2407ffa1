package pfscore

import (
	"fmt"
	"sync"
	"testing"
)

func TestProbeDigestExactFitConcurrentSafe(t *testing.T) {
	bad := 0
	for round := range 300 {
		f := newStmtFixture(t, WithDigestsSize(4))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range 20 {
					f.run(nil, f.sel, fmt.Sprintf("SELECT c%d FROM t", (i+g)%4), StatementResult{})
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, r := range f.s.EventsStatementsSummaryByDigest() {
			if r.Digest == "" {
				bad++
				t.Logf("round %d: NULL row with room for every digest: count %d lost %d", round, r.CountStar, status(f.s, "Performance_schema_digest_lost"))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d rounds", bad)
	}
}
