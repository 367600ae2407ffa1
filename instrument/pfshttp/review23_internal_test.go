package pfshttp

import (
	"fmt"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Failed on c28f769 (fixed since); low severity. The pool bounds its idle threads
// (max) and its lists (2*max+16), but an empty list keeps the backing
// array its busiest moment gave it until dropEmptyLocked drops the list:
// actors that each once had many idle threads leave up to (2*max+16)*max
// slots allocated, O(max²) memory for a pool of max threads (max = 1024:
// about 17 MB of pointers for 1024 threads).
func TestReview23EmptyListsKeepCapacity(t *testing.T) {
	s, err := pfscore.New(pfscore.WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	tc := instrument.NewThreadClass("thread/review23/pool", instrument.WithSchema(s))
	const max = 8
	p := newThreadPool(max)
	prev := ""
	for i := range p.lists - 1 {
		host := fmt.Sprint("10.0.0.", i)
		for prev != "" { // the previous actor's threads all busy again, then ended
			th, _ := p.get("u", prev)
			if th == nil {
				break
			}
			th.End()
		}
		var ts []*instrument.Thread
		for range max { // a burst of max requests of this actor
			ts = append(ts, tc.Start("u", host))
		}
		for _, th := range ts {
			p.put(nil, "u", host, th)
		}
		prev = host
	}
	slots := 0
	for _, l := range p.idle {
		slots += cap(l.ts)
	}
	if slots > 4*max {
		t.Errorf("%d idle threads in %d lists hold %d slots; want O(max) = at most %d", p.n, len(p.idle), slots, 4*max)
	}
	p.closeIdle()
}
