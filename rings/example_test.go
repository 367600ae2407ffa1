package rings_test

import (
	"fmt"

	"github.com/otelpfs/otelpfs/rings"
)

// A thread's history of 3 rows of 2 words (say an event id and a duration):
// after 5 appends it holds the last 3, oldest first.
func Example() {
	r, err := rings.NewPerThread(3, 2)
	if err != nil {
		panic(err)
	}
	for id := uint64(1); id <= 5; id++ {
		r.Append([]uint64{id, 100 * id})
	}
	rows := r.AppendRows(nil)
	for i := 0; i < len(rows); i += r.Width() {
		fmt.Println(rows[i : i+r.Width()])
	}
	// Output:
	// [3 300]
	// [4 400]
	// [5 500]
}

// Writing a row in place, word by word, as the engine does when it closes an
// event; then TRUNCATE.
func ExamplePerThread_Begin() {
	r, _ := rings.NewPerThread(10, 3)
	s := r.Begin() // the oldest slot is now ours: readers skip it
	s.Set(0, 42)   // EVENT_ID
	s.Set(1, 1000) // TIMER_START
	s.Set(2, 1500) // TIMER_END
	s.Commit()     // readers see the whole row, or none of it
	fmt.Println(r.AppendRows(nil))
	r.Reset()
	fmt.Println(r.AppendRows(nil))
	// Output:
	// [42 1000 1500]
	// []
}

// Any goroutine may append to the global ring; an append whose slot is held
// by a writer a whole lap behind is dropped and counted.
func ExampleGlobal() {
	g, _ := rings.NewGlobal(4, 1)
	for i := uint64(1); i <= 6; i++ {
		s := g.Begin()
		s.Set(0, i)
		s.Commit()
	}
	fmt.Println(g.AppendRows(nil), "lost:", g.Lost())
	// Output:
	// [3 4 5 6] lost: 0
}
