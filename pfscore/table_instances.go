package pfscore

import (
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
func (s *Schema) ioByClass(kind Kind, c *store.Container[ioInstance]) []sumEntry[ByEventName, ioStat] {
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
	var out []sumEntry[ByEventName, ioStat]
	for _, cl := range classes {
		if cl.kind == kind {
			st := sums[cl.index]
			st.add(s.destroyedIo[cl.index].load(tag))
			out = append(out, sumEntry[ByEventName, ioStat]{key: rowKey{class: cl.index}, dims: ByEventName{cl.name}, stat: st, grp: uint8(g)})
		}
	}
	return out
}

// Rows of the instance tables.
type (
	mutexInstancesRow struct {
		Name                string `pfs:"NAME,dim"`
		ObjectInstanceBegin uint64 `pfs:"OBJECT_INSTANCE_BEGIN,dim"`
		LockedByThreadID    uint64 `pfs:"LOCKED_BY_THREAD_ID,id,null"`
	}
	rwlockInstancesRow struct {
		Name                  string `pfs:"NAME,dim"`
		ObjectInstanceBegin   uint64 `pfs:"OBJECT_INSTANCE_BEGIN,dim"`
		WriteLockedByThreadID uint64 `pfs:"WRITE_LOCKED_BY_THREAD_ID,id,null"`
		ReadLockedByCount     uint64 `pfs:"READ_LOCKED_BY_COUNT,gauge"`
	}
	condInstancesRow struct {
		Name                string `pfs:"NAME,dim"`
		ObjectInstanceBegin uint64 `pfs:"OBJECT_INSTANCE_BEGIN,dim"`
	}
	fileInstancesRow struct {
		FileName  string `pfs:"FILE_NAME,dim"`
		EventName string `pfs:"EVENT_NAME,dim"`
		OpenCount uint64 `pfs:"OPEN_COUNT,gauge"`
	}
	socketInstancesRow struct {
		EventName           string `pfs:"EVENT_NAME,dim"`
		ObjectInstanceBegin uint64 `pfs:"OBJECT_INSTANCE_BEGIN,dim"`
		ThreadID            uint64 `pfs:"THREAD_ID,id,null"`
		SocketID            int64  `pfs:"SOCKET_ID,attr"`
		IP                  string `pfs:"IP,attr"`
		Port                int64  `pfs:"PORT,attr"`
		State               string `pfs:"STATE,attr"`
	}
)

// ByFile is the key of a file_summary_by_instance row.
type ByFile struct {
	FileName            string `pfs:"FILE_NAME,dim"`
	EventName           string `pfs:"EVENT_NAME,dim"`
	ObjectInstanceBegin uint64 `pfs:"OBJECT_INSTANCE_BEGIN,dim"`
}

// syncRows defines mutex_instances, rwlock_instances or cond_instances.
func syncRows[R any](name string, c func(*Schema) *store.Container[syncInstance], row func(s *Schema, v syncSnap) R) {
	defineRows(name, func(s *Schema) []R {
		var rows []R
		for _, v := range s.syncSnaps(c(s)) {
			rows = append(rows, row(s, v))
		}
		return rows
	}, nil)
}

// ioInstanceRows returns the raw rows of file_summary_by_instance or
// socket_summary_by_instance.
func ioInstanceRows[D any](c func(*Schema) *store.Container[ioInstance], g uint8, dims func(s *Schema, v ioSnap) D) func(*Schema) []sumEntry[D, ioStat] {
	return func(s *Schema) []sumEntry[D, ioStat] {
		var out []sumEntry[D, ioStat]
		for _, v := range s.ioSnaps(c(s), int(g)) {
			out = append(out, sumEntry[D, ioStat]{key: rowKey{obj: v.id}, dims: dims(s, v), stat: v.stat, grp: g})
		}
		return out
	}
}

func init() {
	syncRows("mutex_instances", func(s *Schema) *store.Container[syncInstance] { return s.mutexes },
		func(s *Schema, v syncSnap) mutexInstancesRow {
			return mutexInstancesRow{s.className(v.class), v.id, v.owner}
		})
	syncRows("rwlock_instances", func(s *Schema) *store.Container[syncInstance] { return s.rwlocks },
		func(s *Schema, v syncSnap) rwlockInstancesRow {
			return rwlockInstancesRow{s.className(v.class), v.id, v.owner, uint64(max(v.readers, 0))}
		})
	syncRows("cond_instances", func(s *Schema) *store.Container[syncInstance] { return s.conds },
		func(s *Schema, v syncSnap) condInstancesRow { return condInstancesRow{s.className(v.class), v.id} })
	defineRows("file_instances", func(s *Schema) []fileInstancesRow {
		var rows []fileInstancesRow
		for _, v := range s.ioSnaps(s.fileInsts, truncFile) {
			rows = append(rows, fileInstancesRow{s.names.Lookup(v.name), s.className(v.class), uint64(max(v.open, 0))})
		}
		return rows
	}, nil)
	defineRows("socket_instances", func(s *Schema) []socketInstancesRow {
		var rows []socketInstancesRow
		for _, v := range s.ioSnaps(s.socketInsts, truncSocket) {
			state := "IDLE"
			if v.open > 0 {
				state = "ACTIVE"
			}
			rows = append(rows, socketInstancesRow{s.className(v.class), v.id, v.thread,
				int64(v.id), s.names.Lookup(v.ip), int64(v.port), state})
		}
		return rows
	}, nil)

	files := func(s *Schema) *store.Container[ioInstance] { return s.fileInsts }
	sockets := func(s *Schema) *store.Container[ioInstance] { return s.socketInsts }
	defineSummary("file_summary_by_event_name", groupsFile, nil,
		func(s *Schema) []sumEntry[ByEventName, ioStat] { return s.ioByClass(KindFile, s.fileInsts) })
	defineSummary("file_summary_by_instance", groupsFile, nil,
		ioInstanceRows(files, truncFile, func(s *Schema, v ioSnap) ByFile {
			return ByFile{s.names.Lookup(v.name), s.className(v.class), v.id}
		}))
	defineSummary("socket_summary_by_event_name", groupsSocket, nil,
		func(s *Schema) []sumEntry[ByEventName, ioStat] { return s.ioByClass(KindSocket, s.socketInsts) })
	defineSummary("socket_summary_by_instance", groupsSocket, nil,
		ioInstanceRows(sockets, truncSocket, func(s *Schema, v ioSnap) ByInstance {
			return ByInstance{s.className(v.class), v.id}
		}))
}
