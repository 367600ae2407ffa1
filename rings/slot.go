package rings

import (
	"cmp"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/otelpfs/otelpfs/internal/owned"
)

// Slot is a row being written in place: the handle Begin returns. Its owner
// stores the row's words with Set and publishes the row with Commit. A Slot
// is a value of a few words; it holds no lock and needs no release other than
// Commit.
//
// A Slot whose write the ring dropped (a Global collision, see doc.go) is a
// discard slot: OK reports false, and Set and Commit do nothing, so callers
// need only one code path.
type Slot struct {
	cells []owned.Uint64 // the slot's width cells; nil for a discard slot
	seq   *atomic.Uint64 // the slot's version word; nil for a discard slot
	ver   uint64         // the committed version Commit stores
}

// OK reports whether the row will be recorded: false for a discard slot.
func (s Slot) OK() bool { return s.seq != nil }

// Set stores x in word i of the row. Only the goroutine that called Begin may
// call it, and only before Commit. i must be below the ring's width.
func (s Slot) Set(i int, x uint64) {
	if s.cells == nil {
		return
	}
	s.cells[i].Set(x)
}

// Commit publishes the row: a reader that observes it sees every word Set
// stored before. Only the goroutine that called Begin may call it, once.
// Words not Set keep the value of an older row of the slot; the row's refs
// are nil (Begin cleared them).
func (s Slot) Commit() {
	if s.seq == nil {
		return
	}
	owned.EndStore(s.seq, s.ver)
}

// table is the storage both rings share: rows slots of width words and nrefs
// ref cells each, one flat slice of cells, one flat slice of ref cells and
// one version word per slot. Its only Go pointers, besides the slices' own,
// are those the ref cells hold.
type table struct {
	rows  int
	width int
	nrefs int             // ref cells per row, in [0, maxRefs]
	seq   []atomic.Uint64 // seq[s] guards cells[s*width : (s+1)*width] and refs[s*nrefs : (s+1)*nrefs]
	cells []owned.Uint64  // the rows' words
	refs  []owned.Pointer // the rows' ref cells; nil when nrefs is 0
}

func newTable(rows, width, nrefs int) (table, error) {
	if rows < 1 || width < 1 || rows > maxRows || width > maxWidth || nrefs < 0 || nrefs > maxRefs {
		return table{}, ErrSize
	}
	tb := table{
		rows:  rows,
		width: width,
		nrefs: nrefs,
		seq:   make([]atomic.Uint64, rows),
		cells: make([]owned.Uint64, rows*width),
	}
	if nrefs > 0 {
		tb.refs = make([]owned.Pointer, rows*nrefs)
	}
	return tb, nil
}

// slot returns the handle for slot s, to be committed as ticket t. The writer
// must already own s (its version is dirty(t)). It clears the slot's refs:
// a Slot has no way to set them, and a row must never show an older row's.
func (tb *table) slot(s int, t uint64) Slot {
	if tb.nrefs != 0 {
		tb.storeRefs(s, nil)
	}
	off := s * tb.width
	return Slot{
		cells: tb.cells[off : off+tb.width : off+tb.width],
		seq:   &tb.seq[s],
		ver:   committed(t),
	}
}

// store writes row and refs into slot s, which its caller owns (dirty(t)),
// and commits it as ticket t. refs is nil (store nil refs) or holds nrefs
// pointers.
func (tb *table) store(s int, t uint64, row []uint64, refs []unsafe.Pointer) {
	off := s * tb.width
	owned.SetAll(tb.cells[off:off+len(row)], row)
	if tb.nrefs != 0 {
		tb.storeRefs(s, refs)
	}
	owned.EndStore(&tb.seq[s], committed(t))
}

// storeRefs stores refs, or nil pointers if refs is nil, into the ref cells of
// slot s, which its caller owns. The cells are owned.Pointer: plain stores
// through the write barrier, as the slot's words are plain stores, inside
// the slot's version bracket. A cell that already holds the pointer (the same
// schema or digest text as the slot's older row, or nil again) is not
// stored: the barrier check is skipped with it.
func (tb *table) storeRefs(s int, refs []unsafe.Pointer) {
	n := tb.nrefs
	cells := tb.refs[s*n : s*n+n : s*n+n]
	if refs == nil {
		for i := range cells {
			if cells[i].Load() != nil {
				cells[i].Set(nil)
			}
		}
		return
	}
	refs = refs[:n]
	for i, p := range refs {
		if cells[i].Load() != p {
			cells[i].Set(p)
		}
	}
}

// appendRows appends, oldest first, every row that a validated copy finds in
// the ring with a ticket in the reader's window (doc.go, "Reading"). base and
// head load the ring's base ticket and its next ticket; base must be loaded
// before head, because Reset only moves base to a head already stored.
func (tb *table) appendRows(dst []uint64, base *atomic.Uint64, head func() uint64) []uint64 {
	dst, _ = tb.copyOut(dst, nil, false, base, head)
	return dst
}

// appendRowsRefs is appendRows that also appends each kept row's nrefs refs
// to dstRefs, in the same order.
func (tb *table) appendRowsRefs(dst []uint64, dstRefs []unsafe.Pointer, base *atomic.Uint64, head func() uint64) ([]uint64, []unsafe.Pointer) {
	return tb.copyOut(dst, dstRefs, true, base, head)
}

// copyOut is appendRows, and appendRowsRefs if withRefs.
func (tb *table) copyOut(dst []uint64, dstRefs []unsafe.Pointer, withRefs bool, base *atomic.Uint64, head func() uint64) ([]uint64, []unsafe.Pointer) {
	b1 := base.Load()
	h1 := head()
	n := int(window(b1, h1, tb.rows))
	lo := h1 - uint64(n) // the oldest ticket a row may have
	w := tb.width
	nr := 0 // refs copied per row
	if withRefs {
		nr = tb.nrefs
	}
	// Room for the n rows the ring held at h1: a ring that is empty, or
	// was truncated, or has not wrapped yet, is not copied into a buffer
	// of its whole size (History reads four rings every few milliseconds,
	// most of them nearly empty). Rows appended during the scan may need
	// more: more grows it, up to a row per slot.
	start, startRefs := len(dst), len(dstRefs)
	dst, dstRefs = grow(dst, n*w), grow(dstRefs, n*nr)
	out, outRefs := dst[start:], dstRefs[startRefs:]

	// keys[k] is the ticket of out's row k, minus lo. Up to 256 rows they
	// live on the stack.
	var small [256]uint64
	keys := small[:]
	if n > len(small) {
		keys = make([]uint64, n)
	}
	more := func() {
		m := min(max(n, 16), tb.rows-n) // doubling; k < tb.rows, so m > 0
		dst, dstRefs = grow(dst, m*w), grow(dstRefs, m*nr)
		out, outRefs = dst[start:], dstRefs[startRefs:]
		if n+m > len(keys) {
			keys = append(keys[:n:n], make([]uint64, m)...)
		}
		n += m
	}

	// 1. Copy every committed row no older than lo, in slot order, each under
	// its version word: load it, copy the cells and ref cells, load it again.
	k := 0
	for s := range tb.rows {
		seq := &tb.seq[s]
		v := seq.Load()
		if v&stateMask != stateCommitted {
			continue // free, or being written: its old row is gone
		}
		key := (ticketOf(v) - lo) & ticketMask
		if key >= halfTickets {
			continue // older than lo
		}
		if k == n {
			more()
		}
		row := out[k*w : k*w+w : k*w+w]
		cells := tb.cells[s*w : s*w+w : s*w+w]
		for i := range row {
			row[i] = cells[i].Load()
		}
		if nr != 0 {
			refs := outRefs[k*nr : k*nr+nr : k*nr+nr]
			rcells := tb.refs[s*nr : s*nr+nr : s*nr+nr]
			for i := range refs {
				refs[i] = rcells[i].Load()
			}
		}
		if seq.Load() != v {
			continue // overwritten while copying: the next row overwrites the copy
		}
		keys[k] = key
		k++
	}

	// 2. Keep the rows the ring held during the call: tickets before the
	// head loaded now, and not cut by a Reset that ran meanwhile.
	b2 := base.Load()
	h2 := head()
	if before(lo, b2) {
		lo2 := (b2 - lo) & ticketMask
		k = keep(out, outRefs, keys[:k], w, nr, func(key uint64) bool { return key >= lo2 })
	}
	hi := (h2 - lo) & ticketMask
	k = keep(out, outRefs, keys[:k], w, nr, func(key uint64) bool { return key < hi })

	// 3. Order them oldest first. In slot order tickets ascend from the
	// oldest slot, around the ring: a rotation fixes that. Rows written
	// during the scan can break the pattern; then sort.
	order(out[:k*w], outRefs[:k*nr], keys[:k], w, nr)

	// Refs copied for rows not kept would keep their targets alive for as
	// long as the caller keeps the buffer: clear them.
	clear(outRefs[k*nr:])
	return dst[:start+k*w], dstRefs[:startRefs+k*nr]
}

// keep compacts the rows of out (width w), their refs (nr each) and their
// keys to those whose key satisfies ok, keeping their order, and returns how
// many are left.
func keep(out []uint64, refs []unsafe.Pointer, keys []uint64, w, nr int, ok func(uint64) bool) int {
	k := 0
	for i, key := range keys {
		if !ok(key) {
			continue
		}
		if k != i {
			copy(out[k*w:k*w+w], out[i*w:i*w+w])
			copy(refs[k*nr:k*nr+nr], refs[i*nr:i*nr+nr])
			keys[k] = key
		}
		k++
	}
	return k
}

// order sorts rows (width w) and their refs (nr each) by their keys,
// ascending.
func order(rows []uint64, refs []unsafe.Pointer, keys []uint64, w, nr int) {
	n := len(keys)
	if n < 2 {
		return
	}
	m := 0 // where the smallest key is
	for i, key := range keys {
		if key < keys[m] {
			m = i
		}
	}
	if m != 0 {
		rotate(rows, m*w)
		rotate(refs, m*nr)
		rotate(keys, m)
	}
	if slices.IsSorted(keys) {
		return
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	sorted := make([]uint64, len(rows))
	for i, p := range perm {
		copy(sorted[i*w:i*w+w], rows[p*w:p*w+w])
	}
	copy(rows, sorted)
	if nr != 0 {
		sortedRefs := make([]unsafe.Pointer, len(refs))
		for i, p := range perm {
			copy(sortedRefs[i*nr:i*nr+nr], refs[p*nr:p*nr+nr])
		}
		copy(refs, sortedRefs)
	}
	slices.Sort(keys)
}

// rotate turns s left by m elements, in place.
func rotate[T any](s []T, m int) {
	slices.Reverse(s[:m])
	slices.Reverse(s[m:])
	slices.Reverse(s)
}

// grow extends dst by n elements, reallocating at most once.
func grow[T any](dst []T, n int) []T {
	if cap(dst)-len(dst) < n {
		bigger := make([]T, len(dst), len(dst)+n)
		copy(bigger, dst)
		dst = bigger
	}
	return dst[:len(dst)+n]
}
