package pfscore

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

// TestBoxer: the Values a boxer makes are the Values Go's conversions make:
// equal under ==, the same dynamic type for type switches and reflect, the
// same text; they stay intact across garbage collections and chunk
// boundaries, and one boxing never changes another.
func TestBoxer(t *testing.T) {
	var b boxer
	var got, want []Value
	for i := range 3*boxChunk + 7 {
		u := uint64(i) * 1_000_003
		n := -int64(i) * 77
		s := fmt.Sprintf("wait/synch/mutex/app/m%d", i)
		got = append(got, b.uint(u), b.int(n), b.string(s))
		want = append(want, u, n, s)
	}
	got = append(got, b.uint(0), b.uint(255), b.int(3), b.string(""))
	want = append(want, uint64(0), uint64(255), int64(3), "")
	runtime.GC()
	runtime.GC()
	for i := range got {
		g, w := got[i], want[i]
		if g != w || reflect.TypeOf(g) != reflect.TypeOf(w) || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("value %d: %#v (%T), want %#v (%T)", i, g, g, w, w)
		}
		switch v := g.(type) {
		case uint64:
			if v != w.(uint64) {
				t.Fatalf("value %d: type switch gives %d", i, v)
			}
		case int64:
			if v != w.(int64) {
				t.Fatalf("value %d: type switch gives %d", i, v)
			}
		case string:
			if v != w.(string) {
				t.Fatalf("value %d: type switch gives %q", i, v)
			}
		default:
			t.Fatalf("value %d: type %T", i, g)
		}
	}
	var nilBoxer *boxer
	if v := nilBoxer.uint(1 << 40); v != Value(uint64(1<<40)) {
		t.Errorf("nil boxer: %v", v)
	}
}

// BenchmarkBoxer compares a boxer with Go's conversion, per value.
func BenchmarkBoxer(b *testing.B) {
	b.Run("boxer", func(b *testing.B) {
		b.ReportAllocs()
		var bx boxer
		var sink Value
		for i := range b.N {
			sink = bx.uint(uint64(i) | 1<<40)
			if len(bx.u) == boxChunk {
				bx = boxer{}
			}
		}
		_ = sink
	})
	b.Run("convT64", func(b *testing.B) {
		b.ReportAllocs()
		var sink Value
		for i := range b.N {
			sink = uint64(i) | 1<<40
		}
		_ = sink
	})
}
