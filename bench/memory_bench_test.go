package bench

import (
	"context"
	"sync"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// Memory instruments: an allocation and its free counted on a thread's
// memory_summary rows (instrument.MemoryClass), and the accounted buffer
// pool (instrument.BufferPool) next to sync.Pool. Budgets: the instrumented
// pair at most 40 ns over the raw one and no allocation beyond it; the pool,
// class off, within 1.5x of sync.Pool.

const memBlock = 256

// memSink keeps the raw allocations alive, so that the compiler cannot put
// them on the stack.
var memSink []byte

func memorySchema(b *testing.B, on bool) *pfscore.Schema {
	opts := []pfscore.Option{pfscore.WithoutEnvironment()}
	if on {
		opts = append(opts, pfscore.WithInstrument("memory/bench/%=ON"))
	}
	s, err := pfscore.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkMemoryRaw: the baseline, a heap allocation of 256 bytes and
// its release (to the garbage collector).
func BenchmarkMemoryRaw(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		memSink = make([]byte, memBlock)
	}
}

// BenchmarkMemoryInstrumented: the same allocation counted on a thread
// (class on): MemoryClass.AllocOn, then Memory.Free.
func BenchmarkMemoryInstrumented(b *testing.B) {
	s := memorySchema(b, true)
	c := instrument.NewMemoryClass("memory/bench/blocks", instrument.WithSchema(s))
	t := instrument.NewThread("thread/bench/worker", instrument.WithSchema(s))
	defer t.End()
	b.ReportAllocs()
	for b.Loop() {
		memSink = make([]byte, memBlock)
		m := c.AllocOn(t, memBlock)
		m.Free()
	}
}

// BenchmarkMemoryAccounting: the instrumented pair's accounting alone
// (AllocOn and Free, class on, on a thread), without the allocation: what
// BenchmarkMemoryInstrumented adds to BenchmarkMemoryRaw, measured apart
// from the garbage collector's noise.
func BenchmarkMemoryAccounting(b *testing.B) {
	s := memorySchema(b, true)
	c := instrument.NewMemoryClass("memory/bench/blocks", instrument.WithSchema(s))
	t := instrument.NewThread("thread/bench/worker", instrument.WithSchema(s))
	defer t.End()
	b.ReportAllocs()
	for b.Loop() {
		m := c.AllocOn(t, memBlock)
		m.Free()
	}
}

// BenchmarkMemoryInstrumentedCtx: as BenchmarkMemoryInstrumented, the
// thread taken from a context (Alloc(ctx, n)) as a request handler would.
func BenchmarkMemoryInstrumentedCtx(b *testing.B) {
	s := memorySchema(b, true)
	c := instrument.NewMemoryClass("memory/bench/blocks", instrument.WithSchema(s))
	ctx, t := instrument.StartThread(context.Background(), "thread/bench/worker", instrument.WithSchema(s))
	defer t.End()
	b.ReportAllocs()
	for b.Loop() {
		memSink = make([]byte, memBlock)
		m := c.Alloc(ctx, memBlock)
		m.Free()
	}
}

// BenchmarkMemoryDisabled: the class off (the default).
func BenchmarkMemoryDisabled(b *testing.B) {
	s := memorySchema(b, false)
	c := instrument.NewMemoryClass("memory/bench/blocks", instrument.WithSchema(s))
	t := instrument.NewThread("thread/bench/worker", instrument.WithSchema(s))
	defer t.End()
	b.ReportAllocs()
	for b.Loop() {
		memSink = make([]byte, memBlock)
		m := c.AllocOn(t, memBlock)
		m.Free()
	}
}

// BenchmarkBufferPool: Get and Put of a 256-byte buffer, default settings
// (the class off), no thread.
func BenchmarkBufferPool(b *testing.B) {
	p := instrument.NewBufferPool("memory/bench/buffers", instrument.WithSchema(memorySchema(b, false)))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		buf := p.Get(ctx, memBlock)
		buf.B[0] = 1
		p.Put(buf)
	}
}

// BenchmarkBufferPoolAccounted: the class on, on a thread.
func BenchmarkBufferPoolAccounted(b *testing.B) {
	s := memorySchema(b, true)
	p := instrument.NewBufferPool("memory/bench/buffers", instrument.WithSchema(s))
	t := instrument.NewThread("thread/bench/worker", instrument.WithSchema(s))
	defer t.End()
	b.ReportAllocs()
	for b.Loop() {
		buf := p.GetOn(t, memBlock)
		buf.B[0] = 1
		p.Put(buf)
	}
}

// BenchmarkSyncPool: the peer, sync.Pool of *[]byte of the same size.
func BenchmarkSyncPool(b *testing.B) {
	p := sync.Pool{New: func() any { s := make([]byte, memBlock); return &s }}
	b.ReportAllocs()
	for b.Loop() {
		buf := p.Get().(*[]byte)
		(*buf)[0] = 1
		p.Put(buf)
	}
}
