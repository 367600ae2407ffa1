package pfscore

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/otelpfs/otelpfs/digest"
)

// Statement digests: the text cache, and the table behind
// events_statements_summary_by_digest.
//
// # The statement cache
//
// Most of a service's SQL is the same few texts with placeholders, so the
// digest of a text is computed once: stmtCache maps an exact text to its
// stmtEntry (DIGEST, DIGEST_TEXT), in a fixed array of atomic pointers, two
// ways per set (a miss fills an empty way, else one at random). A hit costs
// a hash of the text's address (stmtCache.sites), or of the text when it
// comes from a new address, and a comparison; a miss normalizes the text
// (digest.Normalizer, pooled) and publishes a new entry. Entries are
// immutable but for their binding (below), so readers and writers share
// them without locks; an entry replaced in the cache lives on while
// statements or history rows point to it. The digest settings are the
// schema's, fixed at New, so the text alone is the key. Texts that differ
// only in their literals share their digest's DIGEST_TEXT (stmtCache.texts).
//
// # The digest table
//
// A digestTable is MySQL's statements_digest_stat_array: records keyed by
// (CURRENT_SCHEMA, DIGEST), found through an open-addressing index of atomic
// pointers that only ever fills (a record is published by a compare-and-swap
// into an empty slot and never removed). Records are made on a new key's
// first statement, at most WithDigestsSize of them; past that, statements of
// new keys count in the table's NULL row and in
// Performance_schema_digest_lost. Statistics are atomic adds, so any number
// of threads may end statements of one digest at once.
//
// TRUNCATE replaces the whole table (Schema.digests): records are never
// reset under writers. A statement that loaded the old table just before
// adds to it and is lost, as one ending during MySQL's reset is. Each cache
// entry binds to the record of its last (table, schema), so the common case
// finds its record with two loads and a comparison.

// stmtEntry is a statement text, its class and its digest. The text is
// the engine's own copy (a caller's string may be a slice of a much larger
// buffer, which a row or the cache would otherwise keep alive); the class
// and the digest are computed on first need: the class by StartSQL, the
// digest only while statements_digest is on.
type stmtEntry struct {
	hash       uint64 // the text's hash in the cache: a mismatch skips the comparison
	text       string
	normalized bool // the text is its own DIGEST_TEXT (see StatementInfo.Normalized)
	cache      *stmtCache
	class      atomic.Pointer[Class]      // statement/sql/<command>; set by StartSQL
	dg         atomic.Pointer[digestInfo] // set once by digestOf: &dgOwn, or an equal copy
	dgState    atomic.Uint32              // 1: a goroutine claimed dgOwn to fill it
	dgOwn      digestInfo                 // the entry's digest, in the entry: one allocation fewer
	bind       atomic.Pointer[digestBinding]
	bindState  atomic.Uint32 // 1: a goroutine claimed bindOwn
	bindOwn    digestBinding // the entry's first binding, in the entry
	// site is the address of the first caller's text the entry was found
	// for (its string data), set once: see stmtCache.sites.
	site atomic.Uintptr
}

// digestInfo is a text's DIGEST and DIGEST_TEXT; has is false for a text
// without tokens (MySQL shows NULL for both).
type digestInfo struct {
	has    bool
	digest digest.Digest
	text   string
}

// digestBinding is where an entry's statements last counted: the slot of
// the digest table of generation gen for schema. It holds no pointer into
// the table, so a table TRUNCATE replaced is freed.
type digestBinding struct {
	gen    uint64
	schema string
	slot   int
}

// maxCachedText bounds the texts the cache keeps: a longer statement (a
// bulk INSERT, typically) is normalized every time, as in MySQL, rather than
// kept in memory.
const maxCachedText = 8 << 10

// stmtCache maps statement texts to their entries.
type stmtCache struct {
	s     *Schema // where SQL command classes register
	seed  maphash.Seed
	slots []atomic.Pointer[stmtEntry] // a text's set is slots i and i+1, i even
	mask  uint64                      // len(slots)-1, low bit clear
	norm  sync.Pool                   // *digest.Normalizer
	// maxDigest bounds the bytes of a normalized text hashed and shown
	// (max_digest_length).
	maxDigest int
	// commands maps SQL command names (sqlCommand's) to their classes,
	// copy-on-write under commandsMu: a new text finds its class without
	// building its name.
	commands   atomic.Pointer[map[string]*Class]
	commandsMu sync.Mutex
	// texts remembers recent digests by DIGEST: texts that differ only in
	// their literals (new to the cache, a digest it has seen) share one
	// DIGEST_TEXT string rather than allocating one each. A slot holds a
	// digestInfo of its own, immutable once stored: a DIGEST and a
	// DIGEST_TEXT, at most max_digest_length bytes, and nothing of the
	// statement's text.
	texts [digestTextSlots]atomic.Pointer[digestInfo]
	// sites finds an entry by the address of the caller's text: most
	// statement texts are string constants, passed at one address every
	// time, so a hash of the address replaces a hash of the text. A slot
	// holds an entry whose site is that address; the text is still
	// compared, because an address says nothing once the string it held
	// is freed and its memory reused. Only an entry's own site writes its
	// slot, so a text seen before but built anew for each statement (a new
	// address every time) never writes the table. An entry evicted from
	// slots leaves it: it holds only entries slots holds (but for races).
	sites     []atomic.Pointer[stmtEntry]
	siteShift uint // 64 - log2(len(sites))
}

// digestTextSlots is the size of stmtCache.texts: a service has a few
// hundred digests, of which the few whose texts vary miss the cache.
const digestTextSlots = 256

// maxStatementCache bounds WithStatementCacheSize.
const maxStatementCache = 1 << 20

func newStmtCache(s *Schema, size, maxDigestLength int) *stmtCache {
	c := &stmtCache{s: s, seed: maphash.MakeSeed(), maxDigest: maxDigestLength}
	if size > 0 {
		n := 2
		for n < min(size, maxStatementCache) {
			n <<= 1
		}
		c.slots = make([]atomic.Pointer[stmtEntry], n)
		c.mask = uint64(n-1) &^ 1
		c.sites = make([]atomic.Pointer[stmtEntry], n)
		c.siteShift = uint(64 - bits.TrailingZeros(uint(n)))
	}
	c.commands.Store(&map[string]*Class{})
	c.norm.New = func() any {
		return digest.New(digest.WithMaxDigestLength(maxDigestLength), digest.WithPerformanceSchemaMaxDigestLength(maxDigestLength))
	}
	return c
}

// lookup returns the entry of text: the cached one, or a new one (cached
// unless the text is longer than maxCachedText).
func (c *stmtCache) lookup(text string, normalized bool) *stmtEntry {
	if len(c.slots) == 0 || len(text) > maxCachedText {
		return &stmtEntry{text: strings.Clone(text), normalized: normalized, cache: c}
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	if p == 0 {
		return c.lookupText(text, normalized)
	}
	site := c.site(p)
	if e := site.Load(); e != nil && e.site.Load() == p && e.normalized == normalized && e.text == text {
		return e
	}
	e := c.lookupText(text, normalized)
	if e.site.Load() == 0 {
		e.site.CompareAndSwap(0, p)
	}
	if e.site.Load() == p && site.Load() != e {
		site.Store(e)
	}
	return e
}

// site returns the slot of the site table for the text address p.
func (c *stmtCache) site(p uintptr) *atomic.Pointer[stmtEntry] {
	return &c.sites[uint64(p)*0x9e3779b97f4a7c15>>c.siteShift]
}

// lookupText is lookup by the text's contents.
func (c *stmtCache) lookupText(text string, normalized bool) *stmtEntry {
	h := maphash.String(c.seed, text)
	i := h & c.mask
	if e := c.slots[i].Load(); e != nil && e.hash == h && e.text == text && e.normalized == normalized {
		return e
	}
	if e := c.slots[i+1].Load(); e != nil && e.hash == h && e.text == text && e.normalized == normalized {
		return e
	}
	e := &stmtEntry{hash: h, text: strings.Clone(text), normalized: normalized, cache: c}
	// An empty way first, else either at random: a way chosen by the hash
	// alone would make the cache direct-mapped, and two texts of one set
	// and way would evict each other at every statement, normalized each
	// time (two of 4,096 slots: one pair in five among 42 texts).
	w := i
	if c.slots[i].Load() != nil {
		w = i + 1
		if c.slots[i+1].Load() != nil {
			w = i + uint64(rand.Uint32()&1)
		}
	}
	if old := c.slots[w].Swap(e); old != nil {
		// The evicted entry leaves the site table too: the cache keeps
		// at most len(slots) entries (WithStatementCacheSize), not
		// twice as many. (A lookup that found it just before may put it
		// back; it leaves again when its site slot is next taken.)
		if p := old.site.Load(); p != 0 {
			c.site(p).CompareAndSwap(old, nil)
		}
	}
	return e
}

// sqlClass returns the statement/sql/<command> class of e's text,
// registering it on first use; nil if the class table is full.
func (e *stmtEntry) sqlClass() *Class {
	if c := e.class.Load(); c != nil {
		return c
	}
	c := e.cache.commandClass(sqlCommand(e.text))
	if c != nil {
		e.class.Store(c)
	}
	return c
}

// commandClass returns the class statement/sql/<cmd>, registering it on
// first use; nil if the class table is full (counted there).
func (c *stmtCache) commandClass(cmd string) *Class {
	if k := (*c.commands.Load())[cmd]; k != nil {
		return k
	}
	k, _ := c.s.Register("statement/sql/" + cmd)
	if k == nil {
		return nil
	}
	c.commandsMu.Lock()
	old := *c.commands.Load()
	next := make(map[string]*Class, len(old)+1)
	for n, v := range old {
		next[n] = v
	}
	next[cmd] = k
	c.commands.Store(&next)
	c.commandsMu.Unlock()
	return k
}

// digestOf returns e's digest, computing it on first need. Once it has
// returned, e.dg holds the digest for good: whoever publishes first (the
// goroutine that claimed dgOwn, or one that computed a copy meanwhile)
// wins, and the copies are equal.
func (e *stmtEntry) digestOf() *digestInfo {
	if d := e.dg.Load(); d != nil {
		return d
	}
	d := &e.dgOwn
	if !e.dgState.CompareAndSwap(0, 1) {
		// Another goroutine fills dgOwn: compute a copy rather than wait.
		d = &digestInfo{}
	}
	e.cache.compute(d, e.text, e.normalized)
	e.dg.CompareAndSwap(nil, d) // published whole: readers load the pointer, then the fields
	return e.dg.Load()
}

// compute digests text into d.
func (c *stmtCache) compute(d *digestInfo, text string, normalized bool) {
	if normalized {
		// An application-defined statement (an HTTP route, say) is its own
		// normalized form, bounded as a SQL text's token stream is.
		if text != "" && c.maxDigest > 0 {
			t, _ := clipText(text, c.maxDigest)
			d.has, d.digest, d.text = true, sha256.Sum256([]byte(t)), t
		}
		return
	}
	n := c.norm.Get().(*digest.Normalizer)
	r := n.Normalize(text)
	if r.TokenBytes == 0 || len(r.Text) == 0 {
		c.norm.Put(n)
		return
	}
	d.has, d.digest = true, r.Digest
	slot := &c.texts[binary.LittleEndian.Uint64(r.Digest[:8])%digestTextSlots]
	// Sharing needs equal texts; the digests are compared first because
	// they differ sooner (equal digests with unequal texts would take
	// SHA-256 broken).
	if p := slot.Load(); p != nil && p.digest == r.Digest && p.text == string(r.Text) {
		d.text = p.text
		c.norm.Put(n)
		return
	}
	d.text = string(r.Text)
	c.norm.Put(n)
	// A copy of its own, not d: d is an entry's dgOwn, and a pointer to it
	// would keep the entry, and its text of any length, alive.
	slot.Store(&digestInfo{has: true, digest: d.digest, text: d.text})
}

// stmtCounter indexes the per-statement counters summaries add up besides
// the count and the time.
type stmtCounter int

const (
	xErrors       stmtCounter = iota // SUM_ERRORS
	xWarnings                        // SUM_WARNINGS
	xRowsAffected                    // SUM_ROWS_AFFECTED
	xRowsSent                        // SUM_ROWS_SENT
	xRowsExamined                    // SUM_ROWS_EXAMINED
	xPoolTime                        // SUM_POOL_TIME: waiting for a pooled connection, ps
	xDriverTime                      // SUM_DRIVER_TIME: in the driver's round trips, ps
	xFetchTime                       // SUM_FETCH_TIME: iterating the result, ps
	xRetries                         // COUNT_RETRIES
	xCancelled                       // COUNT_CANCELLED
	numStmtCounters
)

// stmtCounts are a statement's counters, or their sums.
type stmtCounts [numStmtCounters]uint64

// digestTable is the digest table of one TRUNCATE epoch.
//
// The index holds record numbers, not pointers: a table sized for 10,000
// digests has 32,768 slots, and as pointers the garbage collector scanned
// every one of them in every cycle (in the demo service, about 2,300
// instructions a request under callgrind). Records are found by number in
// chunks of pointers allocated as numbers reach them, so the collector
// sees about one pointer a record made.
//
// Invariant: a slot's number, once stored, never changes (records are
// never removed; TRUNCATE replaces the table), and the record's pointer is
// stored in its chunk before the number is published in a slot, so a
// reader that loads a number finds its record.
type digestTable struct {
	gen   uint64          // which table since the schema began: bindings name it
	index []atomic.Uint32 // open addressing, linear probing: record number+1, 0 empty
	mask  uint64
	// chunks hold the records by number, digestChunk a chunk; next hands
	// out the numbers. A number whose record lost the race to publish the
	// same key is not used again: there are 4*len(index) numbers, at least
	// 8 a record the table may hold, so the table runs out of numbers
	// before it is full only if each key's first statement raced seven
	// others making the same new key.
	chunks []atomic.Pointer[[digestChunk]atomic.Pointer[digestRecord]]
	next   atomic.Uint32
	// limit bounds the records: the size less the NULL row, as MySQL counts
	// it. made counts the records published. A statement makes a record only
	// while made is below limit, so the table exceeds its size only by the
	// statements that make new records at the same instant (MySQL reserves
	// a record first, and a reservation given back after losing a race
	// shows other statements a full table meanwhile: with a small table and
	// a preempted goroutine, for a long while).
	limit int64
	made  atomic.Int64
	null  digestRecord   // SCHEMA_NAME NULL, DIGEST NULL: new digests once full
	lost  *atomic.Uint64 // Performance_schema_digest_lost, the schema's
	seed  maphash.Seed
}

// maxDigests bounds WithDigestsSize.
const maxDigests = 1 << 22

// digestChunk is the number of records a chunk of digestTable.chunks holds.
const digestChunk = 256

func newDigestTable(gen uint64, size int, lost *atomic.Uint64) *digestTable {
	limit := min(max(size, 1), maxDigests) - 1
	n := 16
	for n < 2*limit {
		n <<= 1
	}
	t := &digestTable{gen: gen, index: make([]atomic.Uint32, n), mask: uint64(n - 1), limit: int64(limit), lost: lost, seed: maphash.MakeSeed(),
		chunks: make([]atomic.Pointer[[digestChunk]atomic.Pointer[digestRecord]], (4*n+digestChunk-1)/digestChunk)}
	t.null.stats.init()
	return t
}

// at returns the record of slot i, nil if the slot is empty.
func (t *digestTable) at(i uint64) *digestRecord {
	if n := t.index[i].Load(); n != 0 {
		return t.chunks[(n-1)/digestChunk].Load()[(n-1)%digestChunk].Load()
	}
	return nil
}

// number stores r under a new record number and returns the number+1, or 0
// if every number is taken.
func (t *digestTable) number(r *digestRecord) uint32 {
	// Out of numbers, next stops moving (up to one step a concurrent
	// caller past the end), so it never wraps to a number in use.
	capacity := uint32(len(t.chunks) * digestChunk)
	if t.next.Load() >= capacity {
		return 0
	}
	n := t.next.Add(1) - 1
	if n >= capacity {
		return 0
	}
	c := t.chunks[n/digestChunk].Load()
	if c == nil {
		c = new([digestChunk]atomic.Pointer[digestRecord])
		if !t.chunks[n/digestChunk].CompareAndSwap(nil, c) {
			c = t.chunks[n/digestChunk].Load()
		}
	}
	c[n%digestChunk].Store(r)
	return n + 1
}

// digestRecord is a row of events_statements_summary_by_digest.
type digestRecord struct {
	schema string
	digest digest.Digest
	text   string // DIGEST_TEXT
	// class is the class of the statement that made the record: a digest
	// is of one text, so of one class but by accident (DigestBuckets).
	class *Class
	stats digestStats
}

// digestStats are a digest's statistics; every goroutine adds to them.
//
// COUNT_STAR is not a word of its own: a timed statement counts in its
// histogram bucket, an untimed one in untimed, and COUNT_STAR is their sum
// (one atomic add a statement fewer).
type digestStats struct {
	untimed  atomic.Uint64 // statements counted untimed
	sum      atomic.Uint64
	min, max atomic.Uint64 // of timed statements; min starts at MaxUint64
	x        sharedCounts
	first    atomic.Uint64 // FIRST_SEEN, ps; 0: none yet
	last     atomic.Uint64 // LAST_SEEN, ps
	hist     histogram
	sample   atomic.Pointer[querySample]
}

func (d *digestStats) init() { d.min.Store(math.MaxUint64) }

// spanRef is an OpenTelemetry span's ids, if ok.
type spanRef struct {
	ok    bool
	trace [16]byte
	span  [8]byte
}

// querySample is a digest's QUERY_SAMPLE_*: immutable, replaced whole.
type querySample struct {
	text      string // at most max_sql_text_length bytes
	truncated bool
	seen      uint64 // ps
	wait      uint64 // ps; 0 if untimed
	traced    bool   // the statement ran in an OpenTelemetry span:
	trace     [16]byte
	span      [8]byte
}

// find returns the slot of the record of (schema, d), making the record if
// it is new and there is room; -1 if the table is full. now is the
// statement's end.
func (t *digestTable) find(schema string, d *digestInfo, now uint64, c *Class) int {
	h := binary.LittleEndian.Uint64(d.digest[:]) ^ maphash.String(t.seed, schema)
	var fresh uint32 // the number+1 of this statement's new record, once made
	for i, probes := h&t.mask, uint64(0); probes <= t.mask; i, probes = (i+1)&t.mask, probes+1 {
		r := t.at(i)
		if r == nil && fresh == 0 && t.made.Load() >= t.limit {
			// Full, unless the record that filled it was this key's, made
			// in this slot since the load above.
			if r = t.at(i); r == nil {
				return -1
			}
		}
		if r == nil {
			if fresh == 0 {
				rec := &digestRecord{schema: strings.Clone(schema), digest: d.digest, text: d.text, class: c}
				rec.stats.init()
				rec.stats.first.Store(now)
				rec.stats.last.Store(now)
				if fresh = t.number(rec); fresh == 0 {
					return -1
				}
			}
			if t.index[i].CompareAndSwap(0, fresh) {
				t.made.Add(1)
				return int(i)
			}
			r = t.at(i) // another goroutine took the slot
		}
		if r.digest == d.digest && r.schema == schema {
			return int(i)
		}
	}
	return -1
}

// lookup returns the record of (schema, d), nil if the table has none.
func (t *digestTable) lookup(schema string, d *digest.Digest) *digestRecord {
	h := binary.LittleEndian.Uint64(d[:]) ^ maphash.String(t.seed, schema)
	for i, probes := h&t.mask, uint64(0); probes <= t.mask; i, probes = (i+1)&t.mask, probes+1 {
		r := t.at(i)
		if r == nil {
			return nil // records are never removed: the probe ends at a hole
		}
		if r.digest == *d && r.schema == schema {
			return r
		}
	}
	return nil
}

// records appends the table's records, the NULL row first if it counted
// anything.
func (t *digestTable) records(out []*digestRecord) []*digestRecord {
	if t.null.stats.first.Load() != 0 {
		out = append(out, &t.null)
	}
	for i := range t.index {
		if r := t.at(uint64(i)); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// digestRecord returns the record entry e's statements count in under
// schema: the slot its binding names when the binding is of the current
// table, else the table's (bound for the next statement). A full table
// gives its NULL row, counted in Performance_schema_digest_lost, and no
// binding, so that every statement looks again, as MySQL's do.
func (s *Schema) digestRecord(e *stmtEntry, d *digestInfo, schema string, now uint64, c *Class) *digestRecord {
	tbl := s.digests.Load()
	if b := e.bind.Load(); b != nil && b.gen == tbl.gen && b.schema == schema {
		return tbl.at(uint64(b.slot))
	}
	i := tbl.find(schema, d, now, c)
	if i < 0 {
		tbl.lost.Add(1)
		// LAST_SEEN before FIRST_SEEN, exactly (the grain of aggregate
		// would let a later FIRST_SEEN stand above it): readers load
		// FIRST_SEEN first.
		null := &tbl.null.stats
		for l := null.last.Load(); now > l && !null.last.CompareAndSwap(l, now); l = null.last.Load() {
		}
		null.first.CompareAndSwap(0, now)
		return &tbl.null
	}
	b := &e.bindOwn // bindings are immutable once stored: bindOwn serves once
	if !e.bindState.CompareAndSwap(0, 1) {
		b = &digestBinding{}
	}
	r := tbl.at(uint64(i))
	*b = digestBinding{gen: tbl.gen, schema: r.schema, slot: i}
	e.bind.Store(b)
	return r
}

// aggregate counts one statement: timed ones add their wait, to the
// extremes and to the histogram; every non-zero counter adds. end is when it
// ended, ps. A timed statement's histogram bucket, which counts it, is added
// before its wait, the order load relies on.
func (d *digestStats) aggregate(timed bool, wait, end uint64, r *StatementResult) {
	if timed {
		d.hist[histBucket(wait)].Add(1)
		d.sum.Add(wait)
		for m := d.min.Load(); wait < m && !d.min.CompareAndSwap(m, wait); m = d.min.Load() {
		}
		for m := d.max.Load(); wait > m && !d.max.CompareAndSwap(m, wait); m = d.max.Load() {
		}
	} else {
		d.untimed.Add(1)
	}
	d.x.addResult(r)
	for l := d.last.Load(); end > l+lastSeenGrain && !d.last.CompareAndSwap(l, end); l = d.last.Load() {
	}
}

// lastSeenGrain is how far LAST_SEEN may lag the digest's last statement: a
// millisecond. A digest's statements ending closer together than that (a
// hot digest's, the ones whose cost matters) skip the compare-and-swap on a
// word they all share; a query sample's replacement always moves it.
const lastSeenGrain = 1_000_000_000

// sample replaces the digest's query sample by text if MySQL's rule says
// so: there is none, this statement waited longer, or the sample is older
// than the maximum age (ps; 0: no limit).
//
// span is the OpenTelemetry span the statement ran in, which the sample
// keeps: the slowest recent execution of a digest, with its trace, is the
// exemplar the bridge exports.
func (d *digestStats) maybeSample(text string, timed bool, wait, end, maxAge, maxText uint64, span *spanRef) {
	cur := d.sample.Load()
	if cur != nil && !(timed && wait > cur.wait) && !(maxAge != 0 && end > cur.seen && end-cur.seen > maxAge) {
		return
	}
	// LAST_SEEN first, then the sample, which readers load before
	// LAST_SEEN: a read never shows a sample seen after its LAST_SEEN.
	for l := d.last.Load(); end > l && !d.last.CompareAndSwap(l, end); l = d.last.Load() {
	}
	q := &querySample{seen: end, wait: wait}
	if span != nil && span.ok {
		q.traced, q.trace, q.span = true, span.trace, span.span
	}
	q.text, q.truncated = clipText(text, int(maxText)) // text is the entry's copy, or cut and copied
	d.sample.CompareAndSwap(cur, q)                    // a concurrent replacement wins: one sample is as good as another
}

// clipText returns text cut to at most n bytes on a character boundary
// (copied, so that a long statement is not kept whole), and whether it was
// cut.
func clipText(text string, n int) (string, bool) {
	if len(text) <= n {
		return text, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return strings.Clone(text[:cut]), true
}

// showText renders a clipped text as MySQL's format_sqltext does: a cut
// text of more than three characters ends in "...", which replaces its last
// three characters.
func showText(text string, cut bool) string {
	if !cut {
		return text
	}
	i, n := len(text), 0
	for i > 0 && n < 3 {
		i = lastRuneStart(text[:i])
		n++
	}
	if i == 0 {
		return text // three characters or fewer
	}
	return text[:i] + "..."
}

// lastRuneStart returns where the last character of s begins.
func lastRuneStart(s string) int {
	i := len(s) - 1
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return max(i, 0)
}
