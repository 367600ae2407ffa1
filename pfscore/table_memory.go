package pfscore

import "github.com/otelpfs/otelpfs/internal/store"

// memory_summary_global_by_event_name, for now the built-in
// memory/performance_schema/* rows: the memory of the schema's own
// containers, counted in pages (a page is the unit they allocate and free).
// The memory instruments of services come with package memsum.

func (s *Schema) containerStats() []store.ContainerStats {
	return []store.ContainerStats{
		s.threads.Stats(), s.mutexes.Stats(), s.rwlocks.Stats(), s.conds.Stats(),
		s.fileInsts.Stats(), s.socketInsts.Stats(),
	}
}

// memoryGlobalRow is a row of memory_summary_global_by_event_name.
type memoryGlobalRow struct {
	EventName                string `pfs:"EVENT_NAME,dim"`
	CountAlloc               uint64 `pfs:"COUNT_ALLOC,counter"`
	CountFree                uint64 `pfs:"COUNT_FREE,counter"`
	SumNumberOfBytesAlloc    uint64 `pfs:"SUM_NUMBER_OF_BYTES_ALLOC,counter"`
	SumNumberOfBytesFree     uint64 `pfs:"SUM_NUMBER_OF_BYTES_FREE,counter"`
	LowCountUsed             int64  `pfs:"LOW_COUNT_USED,low"`
	CurrentCountUsed         int64  `pfs:"CURRENT_COUNT_USED,gauge"`
	HighCountUsed            int64  `pfs:"HIGH_COUNT_USED,high"`
	LowNumberOfBytesUsed     int64  `pfs:"LOW_NUMBER_OF_BYTES_USED,low"`
	CurrentNumberOfBytesUsed int64  `pfs:"CURRENT_NUMBER_OF_BYTES_USED,gauge"`
	HighNumberOfBytesUsed    int64  `pfs:"HIGH_NUMBER_OF_BYTES_USED,high"`
}

func init() {
	defineRows("memory_summary_global_by_event_name", func(s *Schema) []memoryGlobalRow {
		var rows []memoryGlobalRow
		for _, st := range s.containerStats() {
			// LOW_*: the containers start empty, so their low water mark is 0.
			rows = append(rows, memoryGlobalRow{EventName: st.Name,
				CountAlloc: st.CountAlloc, CountFree: st.CountFree,
				SumNumberOfBytesAlloc: st.SumBytesAlloc, SumNumberOfBytesFree: st.SumBytesFree,
				CurrentCountUsed: int64(st.CurrentCountUsed), HighCountUsed: int64(st.HighCountUsed),
				CurrentNumberOfBytesUsed: int64(st.CurrentBytesUsed), HighNumberOfBytesUsed: int64(st.HighBytesUsed)})
		}
		return rows
	}, nil)
}
