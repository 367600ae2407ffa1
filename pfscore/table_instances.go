package pfscore

import (
	"strconv"

	"github.com/otelpfs/otelpfs/internal/store"
)

// mutex_instances, rwlock_instances, cond_instances, file_instances,
// socket_instances, and the file and socket summaries.

// syncSnap is a copy of a sync instance's identity.
type syncSnap struct {
	class, id, owner uint64
	readers          int64
}

func (s *Schema) syncSnaps(c *store.Container[syncInstance]) []syncSnap {
	return store.AppendRows(c, nil, func(d *syncSnap, _ uint64, r *syncInstance) {
		d.class, d.id, d.owner, d.readers = r.class.Load(), r.id.Load(), r.owner.Load(), r.readers.Load()
	})
}

// ioSnap is a copy of a file or socket instance.
type ioSnap struct {
	class, id, name, thread, port, ip uint64
	open                              int64
	stat                              ioStat
}

// ioSnaps copies the instances of c, a file or socket container whose
// records are of truncation group g.
func (s *Schema) ioSnaps(c *store.Container[ioInstance], g int) []ioSnap {
	tag := s.extTags[g].Load()
	return store.AppendRows(c, nil, func(d *ioSnap, _ uint64, r *ioInstance) {
		d.class, d.id, d.name, d.thread = r.class.Load(), r.id.Load(), r.name.Load(), r.thread.Load()
		d.port, d.ip, d.open = r.port.Load(), r.ip.Load(), r.open.Load()
		d.stat = r.load(tag)
	})
}

// className returns the name of class index i, or "" if there is none.
func (s *Schema) className(i uint64) string {
	if cs := s.Classes(); i < uint64(len(cs)) {
		return cs[i].name
	}
	return ""
}

// ioByClass sums the file or socket statistics per class: live instances
// plus destroyed ones.
func (s *Schema) ioByClass(kind Kind, c *store.Container[ioInstance]) []ioEntry {
	g := int(groupOf(kind))
	tag := s.extTags[g].Load()
	classes := s.Classes()
	s.instMu.Lock() // see instanceStats
	defer s.instMu.Unlock()
	sums := make([]ioStat, len(classes))
	for _, v := range s.ioSnaps(c, g) {
		if v.class < uint64(len(sums)) {
			sums[v.class].add(v.stat)
		}
	}
	var out []ioEntry
	for _, cl := range classes {
		if cl.kind == kind {
			st := sums[cl.index]
			st.add(s.destroyedIo[cl.index].load(tag))
			out = append(out, ioEntry{key: cl.name, lead: Row{cl.name}, stat: st, grp: uint8(g)})
		}
	}
	return out
}

func init() {
	defineTable(&tableDef{
		name:    "mutex_instances",
		columns: cols("NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint, "LOCKED_BY_THREAD_ID", ColUint),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, v := range s.syncSnaps(s.mutexes) {
				rows = append(rows, Row{s.className(v.class), v.id, nullUint(v.owner)})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name:    "rwlock_instances",
		columns: cols("NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint, "WRITE_LOCKED_BY_THREAD_ID", ColUint, "READ_LOCKED_BY_COUNT", ColUint),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, v := range s.syncSnaps(s.rwlocks) {
				rows = append(rows, Row{s.className(v.class), v.id, nullUint(v.owner), uint64(max(v.readers, 0))})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name:    "cond_instances",
		columns: cols("NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, v := range s.syncSnaps(s.conds) {
				rows = append(rows, Row{s.className(v.class), v.id})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name:    "file_instances",
		columns: cols("FILE_NAME", ColString, "EVENT_NAME", ColString, "OPEN_COUNT", ColUint),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, v := range s.ioSnaps(s.fileInsts, truncFile) {
				rows = append(rows, Row{s.names.Lookup(v.name), s.className(v.class), uint64(max(v.open, 0))})
			}
			return rows
		},
	})
	defineTable(&tableDef{
		name: "socket_instances",
		columns: cols("EVENT_NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint, "THREAD_ID", ColUint,
			"SOCKET_ID", ColInt, "IP", ColString, "PORT", ColInt, "STATE", ColString),
		rows: func(s *Schema) []Row {
			var rows []Row
			for _, v := range s.ioSnaps(s.socketInsts, truncSocket) {
				state := "IDLE"
				if v.open > 0 {
					state = "ACTIVE"
				}
				rows = append(rows, Row{s.className(v.class), v.id, nullUint(v.thread),
					int64(v.id), s.names.Lookup(v.ip), int64(v.port), state})
			}
			return rows
		},
	})
	ioSummaryDef("file_summary_by_event_name", []any{"EVENT_NAME", ColString}, groupsFile,
		func(s *Schema) []ioEntry { return s.ioByClass(KindFile, s.fileInsts) })
	ioSummaryDef("file_summary_by_instance", []any{"FILE_NAME", ColString, "EVENT_NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint}, groupsFile,
		func(s *Schema) []ioEntry {
			var out []ioEntry
			for _, v := range s.ioSnaps(s.fileInsts, truncFile) {
				out = append(out, ioEntry{key: strconv.FormatUint(v.id, 10),
					lead: Row{s.names.Lookup(v.name), s.className(v.class), v.id}, stat: v.stat, grp: truncFile})
			}
			return out
		})
	ioSummaryDef("socket_summary_by_event_name", []any{"EVENT_NAME", ColString}, groupsSocket,
		func(s *Schema) []ioEntry { return s.ioByClass(KindSocket, s.socketInsts) })
	ioSummaryDef("socket_summary_by_instance", []any{"EVENT_NAME", ColString, "OBJECT_INSTANCE_BEGIN", ColUint}, groupsSocket,
		func(s *Schema) []ioEntry {
			var out []ioEntry
			for _, v := range s.ioSnaps(s.socketInsts, truncSocket) {
				out = append(out, ioEntry{key: strconv.FormatUint(v.id, 10),
					lead: Row{s.className(v.class), v.id}, stat: v.stat, grp: truncSocket})
			}
			return out
		})
}
