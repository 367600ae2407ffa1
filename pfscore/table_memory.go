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

func init() {
	defineTable(&tableDef{
		name: "memory_summary_global_by_event_name",
		columns: cols("EVENT_NAME", ColString, "COUNT_ALLOC", ColUint, "COUNT_FREE", ColUint,
			"SUM_NUMBER_OF_BYTES_ALLOC", ColUint, "SUM_NUMBER_OF_BYTES_FREE", ColUint,
			"LOW_COUNT_USED", ColInt, "CURRENT_COUNT_USED", ColInt, "HIGH_COUNT_USED", ColInt,
			"LOW_NUMBER_OF_BYTES_USED", ColInt, "CURRENT_NUMBER_OF_BYTES_USED", ColInt, "HIGH_NUMBER_OF_BYTES_USED", ColInt),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, st := range s.containerStats() {
				// LOW_*: the containers start empty, so their low water mark is 0.
				rows = append(rows, Row{st.Name, st.CountAlloc, st.CountFree, st.SumBytesAlloc, st.SumBytesFree,
					int64(0), int64(st.CurrentCountUsed), int64(st.HighCountUsed),
					int64(0), int64(st.CurrentBytesUsed), int64(st.HighBytesUsed)})
			}
			return rows
		},
	})
}
