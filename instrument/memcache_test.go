package instrument

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/pfscore"
)

func strLen(_ int, v string) int { return len(v) }

// checkCacheRow checks that the class's global row counts exactly the
// cache's entries.
func checkCacheRow(t *testing.T, s *pfscore.Schema, name string, c *Cache[int, string]) {
	t.Helper()
	g := globalMem(t, s, name)
	if g.CurrentNumberOfBytesUsed != int64(c.Bytes()) || g.CurrentCountUsed != int64(c.Len()) {
		t.Errorf("global CURRENT %d blocks, %d bytes; the cache holds %d entries, %d bytes",
			g.CurrentCountUsed, g.CurrentNumberOfBytesUsed, c.Len(), c.Bytes())
	}
}

func TestCacheEviction(t *testing.T) {
	const name = "memory/test/cache"
	s := memSchema(t, name)
	c := NewCache(name, 100, strLen, WithSchema(s))
	ctx, th := StartThread(context.Background(), "thread/test/cacher", WithSchema(s))
	defer th.End()
	v40 := string(make([]byte, 40))
	c.Put(ctx, 1, v40)
	c.Put(ctx, 2, v40)
	c.Put(ctx, 3, v40) // evicts 1
	if _, ok := c.Get(1); ok || c.Len() != 2 || c.Bytes() != 80 {
		t.Fatalf("after 3 Puts: Len %d Bytes %d, 1 cached: %v", c.Len(), c.Bytes(), ok)
	}
	c.Get(2)              // 2 is now the most recently used
	c.Put(ctx, 4, "0123") // 84
	c.Put(ctx, 5, v40)    // evicts 3 (2 was used since)
	if _, ok := c.Get(3); ok {
		t.Errorf("3 is still cached")
	}
	for _, k := range []int{2, 4, 5} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%d was evicted", k)
		}
	}
	if c.Bytes() != 84 || c.Len() != 3 {
		t.Errorf("Len %d Bytes %d", c.Len(), c.Bytes())
	}
	checkCacheRow(t, s, name, c)
	if r, _ := threadMem(s, th, name); r.HighNumberOfBytesUsed > 100 || r.CountAlloc != 5 || r.CountFree != 2 {
		t.Errorf("by thread: %+v", r)
	}

	c.Put(ctx, 4, "0123456789") // replaces: 90
	if v, _ := c.Get(4); v != "0123456789" || c.Bytes() != 90 {
		t.Errorf("replaced: %q, Bytes %d", v, c.Bytes())
	}
	c.Put(ctx, 4, string(make([]byte, 101))) // too large: not cached, the old entry removed
	if _, ok := c.Get(4); ok || c.Bytes() != 80 || c.Len() != 2 {
		t.Errorf("an entry over the bound: Len %d Bytes %d", c.Len(), c.Bytes())
	}
	if !c.Delete(2) || c.Delete(2) || c.Bytes() != 40 {
		t.Errorf("Delete: Bytes %d", c.Bytes())
	}
	checkCacheRow(t, s, name, c)
	c.Put(ctx, 6, string(make([]byte, 100))) // the whole bound: evicts everything else
	if c.Len() != 1 || c.Bytes() != 100 {
		t.Errorf("Len %d Bytes %d", c.Len(), c.Bytes())
	}
	c.Delete(6)
	checkCacheRow(t, s, name, c)
	if g := globalMem(t, s, name); g.HighNumberOfBytesUsed != 100 || g.CurrentNumberOfBytesUsed != 0 {
		t.Errorf("global: %+v", g)
	}

	empty := NewCache[int, string]("memory/test/empty", 0, strLen, WithSchema(s))
	empty.Put(ctx, 1, "")
	if empty.Len() != 0 {
		t.Errorf("a cache of 0 bytes holds %d entries", empty.Len())
	}
	fixed := NewCache[int64, [3]int64]("memory/test/fixed", 100, nil, WithSchema(s))
	for i := range int64(10) {
		fixed.PutOn(th, i, [3]int64{i})
	}
	if fixed.Len() != 3 || fixed.Bytes() != 96 {
		t.Errorf("a cache of fixed-size entries: Len %d Bytes %d", fixed.Len(), fixed.Bytes())
	}
}

// cacheModel is a sequential reference of Cache: keys most recently used
// first.
type cacheModel struct {
	max   int
	keys  []int
	vals  map[int]string
	bytes int
}

func (m *cacheModel) remove(k int) {
	if i := slices.Index(m.keys, k); i >= 0 {
		m.keys = slices.Delete(m.keys, i, i+1)
		m.bytes -= len(m.vals[k])
		delete(m.vals, k)
	}
}

func (m *cacheModel) get(k int) (string, bool) {
	v, ok := m.vals[k]
	if ok {
		m.remove(k)
		m.put(k, v)
	}
	return v, ok
}

func (m *cacheModel) put(k int, v string) {
	m.remove(k)
	if len(v) > m.max {
		return
	}
	for m.bytes+len(v) > m.max {
		m.remove(m.keys[len(m.keys)-1])
	}
	m.keys = slices.Insert(m.keys, 0, k)
	m.vals[k] = v
	m.bytes += len(v)
}

// A mix of operations against the model; the class's row counts the
// cache's bytes and entries throughout.
func TestCacheModel(t *testing.T) {
	const name = "memory/test/cache"
	s := memSchema(t, name)
	c := NewCache(name, 1000, strLen, WithSchema(s))
	m := &cacheModel{max: 1000, vals: map[int]string{}}
	ctx, th := StartThread(context.Background(), "thread/test/cacher", WithSchema(s))
	defer th.End()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		k := rng.IntN(40)
		switch rng.IntN(4) {
		case 0, 1:
			v := string(make([]byte, rng.IntN(300)))
			c.Put(ctx, k, v)
			m.put(k, v)
		case 2:
			v, ok := c.Get(k)
			mv, mok := m.get(k)
			if v != mv || ok != mok {
				t.Fatalf("op %d: Get(%d) = %d bytes, %v; the model has %d bytes, %v", i, k, len(v), ok, len(mv), mok)
			}
		case 3:
			_, mok := m.vals[k]
			m.remove(k)
			if ok := c.Delete(k); ok != mok {
				t.Fatalf("op %d: Delete(%d) = %v, the model %v", i, k, ok, mok)
			}
		}
		if c.Len() != len(m.keys) || c.Bytes() != m.bytes {
			t.Fatalf("op %d: Len %d Bytes %d; the model %d, %d", i, c.Len(), c.Bytes(), len(m.keys), m.bytes)
		}
		if i%500 == 0 {
			checkCacheRow(t, s, name, c)
		}
	}
	checkCacheRow(t, s, name, c)
	if r, _ := threadMem(s, th, name); r.HighNumberOfBytesUsed > 1000 || r.CurrentNumberOfBytesUsed != int64(m.bytes) {
		t.Errorf("by thread: %+v", r)
	}
}

// Goroutines, each on its own thread, share a cache; the entries outlive
// the threads that put them.
func TestCacheConcurrentSafe(t *testing.T) {
	const name = "memory/test/cache"
	s := memSchema(t, name)
	c := NewCache(name, 4000, strLen, WithSchema(s))
	workers, ops := 8, 3000
	if testing.Short() {
		ops = 500
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx, th := StartThread(context.Background(), "thread/test/cacher", WithSchema(s))
			defer th.End()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			<-start
			for range ops {
				k := rng.IntN(100)
				switch rng.IntN(4) {
				case 0, 1:
					c.Put(ctx, k, string(make([]byte, rng.IntN(200))))
				case 2:
					c.Get(k)
				default:
					c.Delete(k)
				}
				if b := c.Bytes(); b > 4000 {
					t.Errorf("Bytes() = %d over the bound", b)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	checkCacheRow(t, s, name, c)
	if testing.Verbose() {
		t.Logf("global: %+v", globalMem(t, s, name))
		for _, r := range s.MemorySummaryByAccountByEventName() {
			if r.EventName == name {
				t.Logf("by account %q@%q: %+v", r.User, r.Host, r.MemoryStats)
			}
		}
	}
	sum := 0
	for k := range 100 {
		if v, ok := c.Get(k); ok {
			sum += len(v)
		}
	}
	if sum != c.Bytes() {
		t.Errorf("the entries hold %d bytes, Bytes() = %d", sum, c.Bytes())
	}
	for k := range 100 {
		c.Delete(k)
	}
	if g := globalMem(t, s, name); c.Len() != 0 || g.CurrentCountUsed != 0 || g.CurrentNumberOfBytesUsed != 0 {
		t.Errorf("after deleting everything: Len %d, global %+v", c.Len(), g)
	}
}
