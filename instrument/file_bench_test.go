package instrument_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// File benchmarks: a 64-byte ReadAt from the page cache (a pread system
// call, the cheapest file I/O there is, so the instrument's share is as
// large as it gets) raw, through a disabled class, and enabled.

const benchIOSize = 64

// benchFile returns a file of 4 KiB in a private schema: raw, or wrapped by
// a class that is on or off; th is a thread with events_waits_current and
// history on.
func benchFile(b *testing.B, on bool) (*instrument.File, *os.File, *instrument.Thread) {
	b.Helper()
	s := ioSchema(b, pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	class := instrument.NewFileClass("wait/io/file/bench/data", instrument.WithSchema(s))
	s.UpdateInstruments("wait/io/file/bench/data", ioBool(on), ioBool(true))
	path := filepath.Join(b.TempDir(), "data")
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := class.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	th := instrument.NewThread("thread/bench/reader", instrument.WithSchema(s))
	b.Cleanup(func() { f.Close(); th.End() })
	return f, f.OSFile(), th
}

func BenchmarkFileReadAtRaw(b *testing.B) {
	_, raw, _ := benchFile(b, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		raw.ReadAt(buf, 0)
	}
}

func BenchmarkFileReadAtDisabled(b *testing.B) {
	f, _, _ := benchFile(b, false)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		f.ReadAt(buf, 0)
	}
}

// Enabled and timed, no thread: the instance's and class's summaries.
func BenchmarkFileReadAtEnabled(b *testing.B) {
	f, _, _ := benchFile(b, true)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		f.ReadAt(buf, 0)
	}
}

// Enabled and timed, with a thread: also events_waits_current and
// events_waits_history, and the thread's summary.
func BenchmarkFileReadAtEnabledThread(b *testing.B) {
	f, _, th := benchFile(b, true)
	bf := f.For(th)
	buf := make([]byte, benchIOSize)
	b.ReportAllocs()
	for b.Loop() {
		bf.ReadAt(buf, 0)
	}
}

func BenchmarkFileReadAtRawParallel(b *testing.B) {
	_, raw, _ := benchFile(b, false)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, benchIOSize)
		for pb.Next() {
			raw.ReadAt(buf, 0)
		}
	})
}

// One file read from every core: its shared statistics are the contended
// line.
func BenchmarkFileReadAtEnabledParallel(b *testing.B) {
	f, _, _ := benchFile(b, true)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, benchIOSize)
		for pb.Next() {
			f.ReadAt(buf, 0)
		}
	})
}

// Open and close, the bookkeeping path (instance lookup, OPEN_COUNT).
func BenchmarkFileOpenCloseRaw(b *testing.B) {
	f, _, _ := benchFile(b, true)
	name := f.Name()
	b.ReportAllocs()
	for b.Loop() {
		g, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		g.Close()
	}
}

func BenchmarkFileOpenCloseEnabled(b *testing.B) {
	s := ioSchema(b)
	class := instrument.NewFileClass("wait/io/file/bench/open", instrument.WithSchema(s))
	path := filepath.Join(b.TempDir(), "data")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		g, err := class.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		g.Close()
	}
}

var _ io.ReaderAt = (*instrument.File)(nil)
