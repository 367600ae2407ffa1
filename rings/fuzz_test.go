package rings_test

import (
	"testing"
)

// FuzzAgainstReference decodes a ring's shape (rows, width and refs), a start
// for its counters and a sequence of operations from the input, and runs them
// on both rings and the mutex-based reference (runOpsRefs), comparing every
// copy-out.
func FuzzAgainstReference(f *testing.F) {
	f.Add([]byte{3, 2, 0, 'a', 'a', 'a', 'a', 'c', 'r', 'a', 'c'})
	f.Add([]byte{7, 1, 1, 'b', 'a', 'b', 'a', 'b', 'a', 'b', 'a', 'c'})
	f.Add([]byte{1, 3, 2, 'a', 'c', 'a', 'c', 'r', 'c'})
	f.Add([]byte{5, 1, 2, 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'c', 'a', 'c'})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 {
			return
		}
		rows := 1 + int(in[0])%17
		width := 1 + int(in[1])%4
		start := starts[int(in[2])%len(starts)]
		var ops []op
		for i, c := range in[3:] {
			switch c % 8 {
			case 0, 1, 2:
				ops = append(ops, op{'a', uint64(i)})
			case 3, 4:
				ops = append(ops, op{'b', uint64(i)})
			case 5:
				ops = append(ops, op{'r', 0})
			default:
				ops = append(ops, op{'c', 0})
			}
		}
		nrefs := int(in[1]/4) % 3
		for _, kind := range []string{perThread, global} {
			runOpsRefs(t, kind, rows, width, nrefs, start, ops)
		}
	})
}
