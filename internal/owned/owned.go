package owned

import (
	"sync/atomic"
	"unsafe"
)

// atomicCells makes Set and Add atomic: under the race detector (see the
// package doc), and where a 64-bit plain store is two 32-bit stores that a
// reader could see half done (32-bit platforms).
const atomicCells = raceEnabled || ^uintptr(0)>>63 == 0

// Uint64 is a 64-bit cell with one writer and any number of readers. The zero
// value is 0 and ready to use. A Uint64 must not be copied after first use.
type Uint64 struct {
	v atomic.Uint64
}

// Load atomically loads the value. Safe for concurrent use.
func (w *Uint64) Load() uint64 { return w.v.Load() }

// Set stores x. Only the cell's owner may call it (see the package doc); it
// is a plain store except under the race detector.
func (w *Uint64) Set(x uint64) {
	if atomicCells {
		w.v.Store(x)
		return
	}
	*(*uint64)(unsafe.Pointer(&w.v)) = x
}

// Add adds delta with a plain read-modify-write and returns the new value.
// Only the owner may call it: two owners would lose updates.
func (w *Uint64) Add(delta uint64) uint64 {
	if atomicCells {
		return w.v.Add(delta)
	}
	p := (*uint64)(unsafe.Pointer(&w.v))
	*p += delta
	return *p
}

// SetAll stores src[i] into dst[i] for every i of src, as Set does one cell
// at a time; dst must be at least as long. Only the cells' owner may call
// it. Where cells are plain words and rows are short (below bulkWords) it
// is one copy: a row of twenty cells is a few vector stores instead of
// twenty turns of a loop. Every aligned word is still stored whole, and the
// copy is a call the compiler does not move across the caller's closing
// version store. The bound keeps memmove off its string instructions (REP
// MOVS, used from 2 KiB on amd64), whose stores are not ordered among
// themselves.
func SetAll(dst []Uint64, src []uint64) {
	dst = dst[:len(src)]
	if atomicCells || len(src) >= bulkWords {
		for i, x := range src {
			dst[i].Set(x)
		}
		return
	}
	copy(unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)), src)
}

// OwnLoadAll copies src's values into dst, which must be at least as long.
// Only the cells' owner may call it: the cells are its own, no one else
// stores them, so it reads them with plain loads (one copy) rather than
// atomic ones.
func OwnLoadAll(dst []uint64, src []Uint64) {
	copy(dst[:len(src)], unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(src))), len(src)))
}

// OwnView returns src's values as plain words, without a copy: the owner's
// view of its own cells, for passing a row to a copy (a ring's Append) that
// would otherwise need OwnLoadAll into a temporary first. Only the cells'
// owner may call it, and the view is valid only while the owner does not
// store into the cells: it must not be kept.
func OwnView(src []Uint64) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(src))), len(src))
}

// bulkWords bounds the rows SetAll copies in one memmove (see SetAll).
const bulkWords = 2048 / 8

// Int64 is the signed form of Uint64, with the same contract.
type Int64 struct {
	v atomic.Int64
}

// Load atomically loads the value. Safe for concurrent use.
func (w *Int64) Load() int64 { return w.v.Load() }

// Set stores x; owner only.
func (w *Int64) Set(x int64) {
	if atomicCells {
		w.v.Store(x)
		return
	}
	*(*int64)(unsafe.Pointer(&w.v)) = x
}

// Add adds delta with a plain read-modify-write and returns the new value;
// owner only.
func (w *Int64) Add(delta int64) int64 {
	if atomicCells {
		return w.v.Add(delta)
	}
	p := (*int64)(unsafe.Pointer(&w.v))
	*p += delta
	return *p
}

// Pointer is a pointer cell with one writer and any number of readers, the
// pointer form of Uint64: the row's strings a seqlocked record points to.
// The zero value is nil and ready to use. A Pointer must not be copied after
// first use.
//
// Set is a plain pointer store, which the compiler brackets with the
// garbage collector's write barrier like any other: a pointer is one machine
// word on every platform, so a reader's atomic load sees the old pointer or
// the new one, never a mixture, and the barrier shades the one a store
// overwrites, so a reader holding it keeps a live object. An atomic store
// costs a runtime call and a locked instruction on top (about 17 ns in a
// statement's profile, against 1 for the plain store).
type Pointer struct {
	p unsafe.Pointer
}

// Load atomically loads the pointer. Safe for concurrent use.
func (w *Pointer) Load() unsafe.Pointer { return atomic.LoadPointer(&w.p) }

// OwnPointers is OwnView for pointer cells: the owner's view of its own
// cells as plain pointers, valid only until it next stores into them.
func OwnPointers(src []Pointer) []unsafe.Pointer {
	return unsafe.Slice((*unsafe.Pointer)(unsafe.Pointer(unsafe.SliceData(src))), len(src))
}

// Set stores p. Only the cell's owner may call it; it is a plain store
// (with the write barrier) except under the race detector.
func (w *Pointer) Set(p unsafe.Pointer) {
	if raceEnabled {
		atomic.StorePointer(&w.p, p)
		return
	}
	w.p = p
}
