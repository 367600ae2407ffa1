package instrument_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/otelpfs/otelpfs/instrument"
	"github.com/otelpfs/otelpfs/pfscore"
)

// A service declares one FileClass per kind of file, opens its files
// through it, and reads what it did in file_summary_by_instance.
func ExampleFileClass() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment()) // tests and examples use a private schema
	wal := instrument.NewFileClass("wait/io/file/app/wal", instrument.WithSchema(s))

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "wal.log")

	f, err := wal.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	f.WriteString("BEGIN;\n")
	f.WriteString("INSERT 1;\n")
	f.WriteString("COMMIT;\n")
	f.Sync()
	f.Seek(0, io.SeekStart)
	data, _ := io.ReadAll(f) // a read of 25 bytes, then one at EOF
	f.Close()
	fmt.Printf("%d bytes read back\n", len(data))

	res, _ := s.Select("file_summary_by_instance")
	for _, row := range res.Rows {
		m := map[string]any{}
		for i, c := range res.Columns {
			m[c.Name] = row[i]
		}
		fmt.Println("FILE_NAME:", filepath.Base(m["FILE_NAME"].(string)), "EVENT_NAME:", m["EVENT_NAME"])
		fmt.Println("COUNT_READ:", m["COUNT_READ"], "SUM_NUMBER_OF_BYTES_READ:", m["SUM_NUMBER_OF_BYTES_READ"])
		fmt.Println("COUNT_WRITE:", m["COUNT_WRITE"], "SUM_NUMBER_OF_BYTES_WRITE:", m["SUM_NUMBER_OF_BYTES_WRITE"])
		fmt.Println("COUNT_MISC:", m["COUNT_MISC"], "(create, sync, seek, close)")
	}
	// Output:
	// 25 bytes read back
	// FILE_NAME: wal.log EVENT_NAME: wait/io/file/app/wal
	// COUNT_READ: 2 SUM_NUMBER_OF_BYTES_READ: 25
	// COUNT_WRITE: 3 SUM_NUMBER_OF_BYTES_WRITE: 25
	// COUNT_MISC: 4 (create, sync, seek, close)
}

// For attributes a file's waits to a thread, whose current event then shows
// in events_waits_current.
func ExampleFile_For() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment(), pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true))
	data := instrument.NewFileClass("wait/io/file/app/data", instrument.WithSchema(s))
	worker := instrument.NewThread("thread/app/worker", instrument.WithSchema(s))
	defer worker.End()

	f, err := os.CreateTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	file := data.Wrap(f)
	defer file.Close()

	file.For(worker).WriteAt([]byte("page"), 4096)

	res, _ := s.Select("events_waits_current")
	for _, row := range res.Rows {
		m := map[string]any{}
		for i, c := range res.Columns {
			m[c.Name] = row[i]
		}
		if m["THREAD_ID"] == worker.ID() {
			fmt.Println(m["EVENT_NAME"], m["OPERATION"], m["NUMBER_OF_BYTES"], m["OBJECT_TYPE"])
		}
	}
	// Output:
	// wait/io/file/app/data write 4 FILE
}

// The …Ctx calls and ForCtx attribute a file's waits to the thread a
// context carries: CreateCtx for the open, ForCtx for the writes (as an
// io.Writer, where a method has no room for a context).
func ExampleFile_ForCtx() {
	s, _ := pfscore.New(pfscore.WithoutEnvironment(),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsCurrent, true),
		pfscore.WithConsumer(pfscore.ConsumerEventsWaitsHistory, true))
	logs := instrument.NewFileClass("wait/io/file/app/log", instrument.WithSchema(s))
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	ctx, t := instrument.StartThread(context.Background(), "thread/app/request", instrument.WithSchema(s))
	defer t.End()
	f, err := logs.CreateCtx(ctx, filepath.Join(dir, "access.log"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprintf(f.ForCtx(ctx), "GET %s %d\n", "/", 200)
	f.ForCtx(ctx).Close()

	for _, e := range s.EventsWaitsHistory() {
		if e.ThreadID != t.ID() {
			continue
		}
		if e.HasBytes { // NUMBER_OF_BYTES is NULL but for reads and writes
			fmt.Println(e.EventName, e.Operation, filepath.Base(e.ObjectName), e.NumberOfBytes)
		} else {
			fmt.Println(e.EventName, e.Operation, filepath.Base(e.ObjectName))
		}
	}
	// Output:
	// wait/io/file/app/log create access.log
	// wait/io/file/app/log write access.log 10
	// wait/io/file/app/log close access.log
}
