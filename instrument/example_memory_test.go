package instrument_test

import (
	"context"
	"fmt"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A request's buffers count on its thread while it holds them: the
// by-thread row shows the bytes in use now and the most held at once.
// Memory classes are off by default, as in MySQL: the example turns its
// class on at start-up (pfscore.WithInstrument; OTELPFS_INSTRUMENT, or
// UPDATE setup_instruments through Schema.UpdateInstruments, do the same).
func ExampleMemoryClass() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithInstrument("memory/app/%=ON"))
	in := instrument.WithSchema(s)
	buffers := instrument.NewMemoryClass("memory/app/request_buffers", in)

	ctx, t := instrument.StartThread(context.Background(), "thread/app/request", in)
	defer t.End()

	header := make([]byte, 512)
	hm := buffers.Alloc(ctx, len(header)) // keep the record with the memory
	body := make([]byte, 4096)
	bm := buffers.Alloc(ctx, len(body))
	grown := make([]byte, 2*len(body))
	copy(grown, body)
	body = grown
	bm.Realloc(ctx, len(body)) // the new block counts, then the old one's free
	bm.Free()                  // body is released

	res, _ := s.Query("memory_summary_by_thread_by_event_name", pfscore.Query{
		Where: []string{fmt.Sprintf("THREAD_ID = %d", t.ID()), "EVENT_NAME = 'memory/app/request_buffers'"}})
	rows, _ := pfscore.Scan[pfscore.MemoryByThread](res)
	for _, r := range rows {
		fmt.Println("current bytes:", r.CurrentNumberOfBytesUsed, "high:", r.HighNumberOfBytesUsed,
			"allocs:", r.CountAlloc, "frees:", r.CountFree)
	}
	hm.Free()
	// Output:
	// current bytes: 512 high: 12800 allocs: 3 frees: 2
}
