package memsum

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The model test drives Stats and Shareds as pfscore will (carries along
// MySQL's path, thread ends with reassignment, live roll-ups, TRUNCATE by
// epoch) and checks every row of the five tables against a model that only
// knows the true usage of each group of sources.

const (
	nAccounts = 3
	nUsers    = 2
	nHosts    = 2
)

// accounts (user, host): a0 (u0, h0), a1 (u0, h1), a2 (u1, h1).
var (
	acctUser = [nAccounts]int{0, 0, 1}
	acctHost = [nAccounts]int{0, 1, 1}
)

type viewKind byte

const (
	vThread viewKind = iota
	vAccount
	vUser
	vHost
	vGlobal
)

type viewKey struct {
	kind viewKind
	id   int
}

func (k viewKey) String() string {
	return fmt.Sprintf("%s%d", [...]string{"thread", "account", "user", "host", "global"}[k.kind], k.id)
}

// track is the model of one row: its true usage (count, bytes) and the
// lowest and highest since its marks were last reset.
type track struct {
	cur, lo, hi [2]int64
}

func (t *track) add(count, size int64) {
	t.cur[0] += count
	t.cur[1] += size
	for i := range 2 {
		t.lo[i] = min(t.lo[i], t.cur[i])
		t.hi[i] = max(t.hi[i], t.cur[i])
	}
}

func (t *track) reset() { t.lo, t.hi = t.cur, t.cur }

type mthread struct {
	id   int
	acct int // -1: no account, carries and rolls up to the global Shared
	st   Stat
}

type block struct{ size uint64 }

type world struct {
	t       testing.TB
	epoch   uint64
	nextID  int
	threads []*mthread
	acct    [nAccounts]Shared
	user    [nUsers]Shared
	host    [nHosts]Shared
	global  Shared
	blocks  []block
	views   map[viewKey]*track
	ops     []string // for failure messages
}

func newWorld(t testing.TB) *world {
	w := &world{t: t, views: map[viewKey]*track{}}
	for a := range nAccounts {
		w.views[viewKey{vAccount, a}] = &track{}
	}
	for u := range nUsers {
		w.views[viewKey{vUser, u}] = &track{}
	}
	for h := range nHosts {
		w.views[viewKey{vHost, h}] = &track{}
	}
	w.views[viewKey{vGlobal, 0}] = &track{}
	for range 4 {
		w.spawn(len(w.threads) - 1) // accounts -1, 0, 1, 2
	}
	return w
}

func (w *world) spawn(acct int) {
	th := &mthread{id: w.nextID, acct: acct}
	w.nextID++
	w.threads = append(w.threads, th)
	w.views[viewKey{vThread, th.id}] = &track{}
}

// viewsOf lists the rows a thread's operations show in.
func (w *world) viewsOf(th *mthread) []*track {
	v := []*track{w.views[viewKey{vThread, th.id}], w.views[viewKey{vGlobal, 0}]}
	if th.acct >= 0 {
		v = append(v, w.views[viewKey{vAccount, th.acct}],
			w.views[viewKey{vUser, acctUser[th.acct]}], w.views[viewKey{vHost, acctHost[th.acct]}])
	}
	return v
}

func (w *world) carryAlloc(th *mthread, d AllocDelta) {
	if d.IsZero() {
		return
	}
	if th.acct < 0 {
		w.global.ApplyAllocDelta(d)
		return
	}
	rest := w.acct[th.acct].ApplyAllocDelta(d)
	w.user[acctUser[th.acct]].ApplyAllocDelta(rest) // the user's remainder is dropped
	rest = w.host[acctHost[th.acct]].ApplyAllocDelta(rest)
	w.global.ApplyAllocDelta(rest)
}

func (w *world) carryFree(th *mthread, d FreeDelta) {
	if d.IsZero() {
		return
	}
	if th.acct < 0 {
		w.global.ApplyFreeDelta(d)
		return
	}
	rest := w.acct[th.acct].ApplyFreeDelta(d)
	w.user[acctUser[th.acct]].ApplyFreeDelta(rest)
	rest = w.host[acctHost[th.acct]].ApplyFreeDelta(rest)
	w.global.ApplyFreeDelta(rest)
}

func (w *world) alloc(th *mthread, size uint64) {
	w.carryAlloc(th, th.st.Alloc(w.epoch, size))
	w.blocks = append(w.blocks, block{size})
	for _, v := range w.viewsOf(th) {
		v.add(1, int64(size))
	}
}

// take removes a live block (any thread's: ownership moves freely).
func (w *world) take(i int) block {
	i %= len(w.blocks)
	b := w.blocks[i]
	w.blocks[i] = w.blocks[len(w.blocks)-1]
	w.blocks = w.blocks[:len(w.blocks)-1]
	return b
}

func (w *world) free(th *mthread, b block) {
	w.carryFree(th, th.st.Free(w.epoch, b.size))
	for _, v := range w.viewsOf(th) {
		v.add(-1, -int64(b.size))
	}
}

func (w *world) globalAlloc(size uint64) {
	w.global.Alloc(size)
	w.blocks = append(w.blocks, block{size})
	w.views[viewKey{vGlobal, 0}].add(1, int64(size))
}

func (w *world) globalFree(b block) {
	w.global.Free(b.size)
	w.views[viewKey{vGlobal, 0}].add(-1, -int64(b.size))
}

// end ends a thread: its Stat is drained and rolled up as
// aggregate_thread_memory does, and a new thread takes its place.
func (w *world) end(i, acct int) {
	th := w.threads[i]
	c := th.st.Drain(w.epoch)
	if th.acct < 0 {
		w.global.Aggregate(c)
	} else {
		toParents, toGlobal := c.Reassign()
		w.acct[th.acct].Aggregate(toParents)
		w.global.Aggregate(toGlobal)
		// The net allocation leaves the account, its user and its host for
		// the global Shared; their marks restart (see Counts.Reassign).
		nc, ns := max(int64(c.AllocCount-c.FreeCount), 0), max(int64(c.AllocSize-c.FreeSize), 0)
		if nc != 0 || ns != 0 {
			for _, k := range []viewKey{{vAccount, th.acct}, {vUser, acctUser[th.acct]}, {vHost, acctHost[th.acct]}} {
				w.views[k].add(-nc, -ns)
				w.views[k].reset()
			}
		}
	}
	delete(w.views, viewKey{vThread, th.id})
	w.threads = append(w.threads[:i], w.threads[i+1:]...)
	w.spawn(acct)
}

// rollUp moves an account's balanced part and capacities to its user and
// host (MySQL's memory_partial_aggregate of a live account, the first step
// of TRUNCATE of the account table with MySQL's scope). The user, host and
// global rows do not change; the account row keeps its CURRENT and its
// marks restart from there.
func (w *world) rollUp(a int) {
	m := w.acct[a].MoveBalanced()
	w.user[acctUser[a]].Aggregate(m)
	w.host[acctHost[a]].Aggregate(m)
	w.views[viewKey{vAccount, a}].reset()
}

func (w *world) truncate() {
	w.epoch++
	for i := range w.acct {
		w.acct[i].Rebase()
	}
	for i := range w.user {
		w.user[i].Rebase()
	}
	for i := range w.host {
		w.host[i].Rebase()
	}
	w.global.Rebase()
	for _, v := range w.views {
		v.reset()
	}
}

// rows builds every row of the five tables as pfscore will.
func (w *world) rows() map[viewKey]Row {
	rows := map[viewKey]Row{}
	var glob Row
	for _, th := range w.threads {
		r := th.st.Load(w.epoch)
		rows[viewKey{vThread, th.id}] = r
		glob.Add(r)
		if th.acct >= 0 {
			for _, k := range []viewKey{{vAccount, th.acct}, {vUser, acctUser[th.acct]}, {vHost, acctHost[th.acct]}} {
				x := rows[k]
				x.Add(r)
				rows[k] = x
			}
		}
	}
	for a := range nAccounts {
		r := w.acct[a].Load()
		glob.Add(r)
		for _, k := range []viewKey{{vAccount, a}, {vUser, acctUser[a]}, {vHost, acctHost[a]}} {
			x := rows[k]
			x.Add(r)
			rows[k] = x
		}
	}
	for u := range nUsers {
		x := rows[viewKey{vUser, u}]
		x.Add(w.user[u].Load())
		rows[viewKey{vUser, u}] = x
	}
	for h := range nHosts {
		r := w.host[h].Load()
		glob.Add(r)
		x := rows[viewKey{vHost, h}]
		x.Add(r)
		rows[viewKey{vHost, h}] = x
	}
	glob.Add(w.global.Load())
	rows[viewKey{vGlobal, 0}] = glob.Global()
	rows[rawGlobal] = glob
	return rows
}

// rawGlobal keys the global row before Row.Global.
var rawGlobal = viewKey{vGlobal, -1}

// same fails unless the rows of keys are identical in before and after:
// a roll-up moves counters between sources of these rows and changes none.
func (w *world) same(what string, before, after map[viewKey]Row, keys ...viewKey) {
	w.t.Helper()
	for _, k := range keys {
		if before[k] != after[k] {
			w.t.Fatalf("%s changed %s:\nbefore %+v\nafter  %+v\nops %v", what, k, before[k], after[k], w.ops)
		}
	}
}

func (w *world) check() {
	w.t.Helper()
	rows := w.rows()
	for k, v := range w.views {
		r := rows[k]
		fail := func(what string) {
			w.t.Helper()
			w.t.Fatalf("%s: %s\nrow   %+v\nmodel %+v\nops %v", k, what, r, *v, w.ops)
		}
		if !r.Valid() {
			fail("row breaks CURRENT = ALLOC - FREE or LOW <= CURRENT <= HIGH")
		}
		if r.CurrentCountUsed != v.cur[0] || r.CurrentNumberOfBytesUsed != v.cur[1] {
			fail("CURRENT differs from the true usage")
		}
		if r.LowCountUsed > v.lo[0] || r.LowNumberOfBytesUsed > v.lo[1] {
			fail("LOW above the lowest usage since the last truncate")
		}
		if r.HighCountUsed < v.hi[0] || r.HighNumberOfBytesUsed < v.hi[1] {
			fail("HIGH below the highest usage since the last truncate")
		}
		// A thread's row is one source, carried into nothing: its marks are
		// exact, not estimates.
		if k.kind == vThread && (r.LowCountUsed != v.lo[0] || r.LowNumberOfBytesUsed != v.lo[1] ||
			r.HighCountUsed != v.hi[0] || r.HighNumberOfBytesUsed != v.hi[1]) {
			fail("thread marks differ from the lowest and highest usage")
		}
		if k.kind == vGlobal && (r.LowCountUsed < 0 || r.LowNumberOfBytesUsed < 0) {
			fail("global LOW below zero")
		}
	}
	var n, bytes int64
	for _, b := range w.blocks {
		n++
		bytes += int64(b.size)
	}
	if g := rows[viewKey{vGlobal, 0}]; g.CurrentCountUsed != n || g.CurrentNumberOfBytesUsed != bytes {
		w.t.Fatalf("global CURRENT %d blocks %d bytes, live %d blocks %d bytes; ops %v",
			g.CurrentCountUsed, g.CurrentNumberOfBytesUsed, n, bytes, w.ops)
	}
}

// checkTruncated checks TRUNCATE's effect on every row: COUNT_ALLOC and
// COUNT_FREE (and the byte sums) reduced by the same value, at most their
// minimum, CURRENT unchanged, LOW = HIGH = CURRENT.
func (w *world) checkTruncated(before, after map[viewKey]Row) {
	w.t.Helper()
	for k, a := range after {
		b := before[k]
		dc, ds := b.CountAlloc-a.CountAlloc, b.SumNumberOfBytesAlloc-a.SumNumberOfBytesAlloc
		ok := b.CountFree-a.CountFree == dc && b.SumNumberOfBytesFree-a.SumNumberOfBytesFree == ds &&
			dc <= min(b.CountAlloc, b.CountFree) && ds <= min(b.SumNumberOfBytesAlloc, b.SumNumberOfBytesFree) &&
			a.CurrentCountUsed == b.CurrentCountUsed && a.CurrentNumberOfBytesUsed == b.CurrentNumberOfBytesUsed &&
			a.LowCountUsed == a.CurrentCountUsed && a.HighCountUsed == a.CurrentCountUsed &&
			a.HighNumberOfBytesUsed == a.CurrentNumberOfBytesUsed &&
			a.LowNumberOfBytesUsed == a.CurrentNumberOfBytesUsed
		if !ok {
			w.t.Fatalf("TRUNCATE of %s:\nbefore %+v\nafter  %+v\nops %v", k, b, a, w.ops)
		}
	}
}

// run interprets data as operations, checking every row after each.
func runModel(t testing.TB, data []byte) {
	w := newWorld(t)
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	for len(data) > 0 {
		op, x, y := next()%16, next(), next()
		th := w.threads[x%len(w.threads)]
		size := uint64(1 + y*y%5000)
		switch {
		case op < 6:
			w.ops = append(w.ops, fmt.Sprintf("alloc(t%d,%d)", th.id, size))
			w.alloc(th, size)
		case op < 11 && len(w.blocks) > 0:
			b := w.take(y)
			w.ops = append(w.ops, fmt.Sprintf("free(t%d,%d)", th.id, b.size))
			w.free(th, b)
		case op == 11:
			w.ops = append(w.ops, fmt.Sprintf("galloc(%d)", size))
			w.globalAlloc(size)
		case op == 12 && len(w.blocks) > 0:
			b := w.take(y)
			w.ops = append(w.ops, fmt.Sprintf("gfree(%d)", b.size))
			w.globalFree(b)
		case op == 13:
			w.ops = append(w.ops, fmt.Sprintf("end(t%d)", th.id))
			before := w.rows()
			w.end(x%len(w.threads), y%(nAccounts+1)-1)
			w.same("a thread's end", before, w.rows(), rawGlobal)
		case op == 14:
			a := y % nAccounts
			w.ops = append(w.ops, fmt.Sprintf("rollup(a%d)", a))
			before := w.rows()
			w.rollUp(a)
			w.same("an account's roll-up", before, w.rows(), rawGlobal,
				viewKey{vUser, acctUser[a]}, viewKey{vHost, acctHost[a]})
		case op == 15:
			w.ops = append(w.ops, "truncate")
			before := w.rows()
			w.truncate()
			w.checkTruncated(before, w.rows())
		}
		if len(w.ops) > 64 {
			w.ops = w.ops[len(w.ops)-64:]
		}
		w.check()
	}
}

func TestModel(t *testing.T) {
	runs, length := 400, 600
	if testing.Short() {
		runs = 50
	}
	for seed := range runs {
		r := rand.New(rand.NewPCG(uint64(seed), 0x6d656d73756d))
		data := make([]byte, length)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		runModel(t, data)
	}
}

func FuzzModel(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 1, 2, 6, 1, 0, 15, 0, 0, 0, 0, 3})
	f.Add([]byte{0, 1, 9, 6, 2, 9, 13, 1, 1, 12, 0, 0, 14, 0, 0})
	f.Add([]byte{11, 0, 40, 0, 3, 7, 6, 2, 0, 6, 3, 0, 13, 3, 2, 15, 0, 0, 1, 3, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 3000 {
			data = data[:3000]
		}
		runModel(t, data)
	})
}
