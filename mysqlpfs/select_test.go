package mysqlpfs_test

import (
	"reflect"
	"testing"
)

func TestSelectWhereOrder(t *testing.T) {
	f := newFixture(t)
	db := f.db(t)
	cols, rows := queryRows(t, db, `SELECT EVENT_NAME, COUNT_STAR FROM performance_schema.events_waits_summary_global_by_event_name
		WHERE EVENT_NAME LIKE 'WAIT/synch/mutex/app/%' ORDER BY COUNT_STAR DESC, EVENT_NAME`)
	if want := []string{"EVENT_NAME", "COUNT_STAR"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("columns %v, want %v", cols, want)
	}
	want := [][]string{{"wait/synch/mutex/app/cache", "3"}, {"wait/synch/mutex/app/queue", "2"}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}
