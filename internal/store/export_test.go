package store

// Test hooks. They are set before the container is shared.

// UseSharedCounterForTest switches c to MySQL's page and record choice: shared
// counters advanced by every failed attempt (the flaw the K+1 test detects).
func UseSharedCounterForTest[T any](c *Container[T]) { c.shared = true }

// StartNearWraparoundForTest makes every page created from now on start its
// records' Lock versions at version and its frees counter at frees, so tests
// run the version and counter arithmetic across their wraparound.
func StartNearWraparoundForTest[T any](c *Container[T], version uint32, frees uint64) {
	c.initLock = version << 2
	c.initFrees = frees << 2
}

// PublishedForTest reports whether r lies in a page the container publishes.
func PublishedForTest[T any](c *Container[T], r *Record[T]) bool {
	p := c.pages[r.page].Load()
	return p != nil && &p.recs[r.pos] == r
}

// SetLockWordForTest sets a Lock's raw word.
func SetLockWordForTest(l *Lock, w uint32) { l.w.Store(w) }

// LockWordForTest returns a Lock's raw word.
func LockWordForTest(l *Lock) uint32 { return l.word() }
