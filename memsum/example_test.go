package memsum_test

import (
	"fmt"

	"github.com/otelpfs/otelpfs/memsum"
)

// The reference's example: thread 1 uses 1 to 2 MB, thread 2 uses 10 to
// 12 MB; the account they both belong to shows the worst case, 11 to 14 MB.
func Example_account() {
	const mb = 1 << 20
	var epoch uint64 // the engine's TRUNCATE epoch
	var thread1, thread2 memsum.Stat
	var account, global memsum.Shared

	// The engine carries every new high or low along the account's path.
	alloc := func(s *memsum.Stat, size uint64) {
		if d := s.Alloc(epoch, size); !d.IsZero() {
			global.ApplyAllocDelta(account.ApplyAllocDelta(d))
		}
	}
	free := func(s *memsum.Stat, size uint64) {
		if d := s.Free(epoch, size); !d.IsZero() {
			global.ApplyFreeDelta(account.ApplyFreeDelta(d))
		}
	}

	alloc(&thread1, 1*mb)
	alloc(&thread2, 10*mb)
	// TRUNCATE TABLE memory_summary_by_account_by_event_name: the marks
	// restart from the current usage.
	epoch++
	account.Rebase()
	global.Rebase()

	alloc(&thread1, 1*mb) // thread 1 peaks at 2 MB
	free(&thread1, 1*mb)
	alloc(&thread2, 2*mb) // thread 2 peaks at 12 MB
	free(&thread2, 2*mb)

	show := func(name string, r memsum.Row) {
		fmt.Printf("%-8s LOW %2d MB  CURRENT %2d MB  HIGH %2d MB\n", name,
			r.LowNumberOfBytesUsed/mb, r.CurrentNumberOfBytesUsed/mb, r.HighNumberOfBytesUsed/mb)
	}
	r1, r2 := thread1.Load(epoch), thread2.Load(epoch)
	show("thread 1", r1)
	show("thread 2", r2)

	// An account's row: its live threads and its own Shared.
	acct := account.Load()
	acct.Add(r1)
	acct.Add(r2)
	show("account", acct)
	// Output:
	// thread 1 LOW  1 MB  CURRENT  1 MB  HIGH  2 MB
	// thread 2 LOW 10 MB  CURRENT 10 MB  HIGH 12 MB
	// account  LOW 11 MB  CURRENT 11 MB  HIGH 14 MB
}
