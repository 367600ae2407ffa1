package pfscore

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

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
// ways per set, replaced at random on a miss. A hit costs a hash of the text
// and a comparison; a miss normalizes the text (digest.Normalizer, pooled)
// and publishes a new entry. Entries are immutable but for their binding
// (below), so readers and writers share them without locks; an entry
// replaced in the cache lives on while statements or history rows point to
// it. The digest settings are the schema's, fixed at New, so the text alone
// is the key.
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

// stmtEntry is a statement text and its digest.
type stmtEntry struct {
	text       string
	normalized bool // the text is its own DIGEST_TEXT (see StatementInfo.Normalized)
	has        bool // the token stream is not empty: DIGEST and DIGEST_TEXT are not NULL
	digest     digest.Digest
	digestText string
	class      *Class // the statement/sql/<command> class of a SQL text; nil if it could not register
	bind       atomic.Pointer[digestBinding]
}

// digestBinding is the record an entry's statements last counted in.
type digestBinding struct {
	table  *digestTable
	schema string
	rec    *digestRecord
}

// maxCachedText bounds the texts the cache keeps: a longer statement (a
// bulk INSERT, typically) is normalized every time, as in MySQL, rather than
// pinning its text in memory.
const maxCachedText = 8 << 10

// stmtCache maps statement texts to their entries.
type stmtCache struct {
	s     *Schema // where SQL command classes register
	seed  maphash.Seed
	slots []atomic.Pointer[stmtEntry] // a text's set is slots i and i+1, i even
	mask  uint64                      // len(slots)-1, low bit clear
	norm  sync.Pool                   // *digest.Normalizer
}

func newStmtCache(s *Schema, size, maxDigestLength int) *stmtCache {
	c := &stmtCache{s: s, seed: maphash.MakeSeed()}
	if size > 0 {
		n := 2
		for n < size {
			n <<= 1
		}
		c.slots = make([]atomic.Pointer[stmtEntry], n)
		c.mask = uint64(n-1) &^ 1
	}
	c.norm.New = func() any {
		return digest.New(digest.WithMaxDigestLength(maxDigestLength), digest.WithPerformanceSchemaMaxDigestLength(maxDigestLength))
	}
	return c
}

// lookup returns the entry of text, computing it on a miss.
func (c *stmtCache) lookup(text string, normalized bool) *stmtEntry {
	if len(c.slots) == 0 || len(text) > maxCachedText {
		return c.compute(text, normalized)
	}
	h := maphash.String(c.seed, text)
	i := h & c.mask
	if e := c.slots[i].Load(); e != nil && e.text == text && e.normalized == normalized {
		return e
	}
	if e := c.slots[i+1].Load(); e != nil && e.text == text && e.normalized == normalized {
		return e
	}
	// The entry keeps the caller's string, not a copy: a service that
	// repeats a text mostly passes the same string (a constant), which the
	// comparison above then finds equal by its pointer.
	e := c.compute(text, normalized)
	c.slots[i+h>>63].Store(e)
	return e
}

// compute digests text.
func (c *stmtCache) compute(text string, normalized bool) *stmtEntry {
	e := &stmtEntry{text: text, normalized: normalized}
	if normalized {
		// An application-defined statement (an HTTP route, say) is its own
		// normalized form.
		if text != "" {
			e.has, e.digest, e.digestText = true, sha256.Sum256([]byte(text)), text
		}
		return e
	}
	if c.s != nil {
		e.class, _ = c.s.Register(SQLCommand(text)) // a full class table: counted there, and the statement is not instrumented
	}
	n := c.norm.Get().(*digest.Normalizer)
	r := n.Normalize(text)
	if r.TokenBytes > 0 && len(r.Text) > 0 {
		e.has, e.digest, e.digestText = true, r.Digest, string(r.Text)
	}
	c.norm.Put(n)
	return e
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
type digestTable struct {
	index []atomic.Pointer[digestRecord] // open addressing, linear probing
	mask  uint64
	limit int64          // records at most
	n     atomic.Int64   // records made, or reserved
	null  digestRecord   // SCHEMA_NAME NULL, DIGEST NULL: new digests once full
	lost  *atomic.Uint64 // Performance_schema_digest_lost, the schema's
	seed  maphash.Seed
}

func newDigestTable(limit int, lost *atomic.Uint64) *digestTable {
	n := 16
	for n < 2*limit {
		n <<= 1
	}
	t := &digestTable{index: make([]atomic.Pointer[digestRecord], n), mask: uint64(n - 1), limit: int64(limit), lost: lost, seed: maphash.MakeSeed()}
	t.null.stats.init()
	return t
}

// digestRecord is a row of events_statements_summary_by_digest.
type digestRecord struct {
	schema string
	digest digest.Digest
	text   string // DIGEST_TEXT
	stats  digestStats
}

// digestStats are a digest's statistics; every goroutine adds to them.
type digestStats struct {
	count, sum atomic.Uint64
	min, max   atomic.Uint64 // of timed statements; min starts at MaxUint64
	x          sharedCounts
	first      atomic.Uint64 // FIRST_SEEN, ps; 0: none yet
	last       atomic.Uint64 // LAST_SEEN, ps
	hist       histogram
	sample     atomic.Pointer[querySample]
}

func (d *digestStats) init() { d.min.Store(math.MaxUint64) }

// querySample is a digest's QUERY_SAMPLE_*: immutable, replaced whole.
type querySample struct {
	text      string // at most max_sql_text_length bytes
	truncated bool
	seen      uint64 // ps
	wait      uint64 // ps; 0 if untimed
}

// find returns the record of (schema, d), making it if it is new and there
// is room, else the NULL row (counting the loss). now is the statement's end.
func (t *digestTable) find(schema string, e *stmtEntry, now uint64) *digestRecord {
	h := binary.LittleEndian.Uint64(e.digest[:]) ^ maphash.String(t.seed, schema)
	var fresh *digestRecord
	for i, probes := h&t.mask, uint64(0); probes <= t.mask; i, probes = (i+1)&t.mask, probes+1 {
		r := t.index[i].Load()
		if r == nil {
			if fresh == nil {
				if t.n.Add(1) > t.limit {
					t.n.Add(-1)
					break
				}
				fresh = &digestRecord{schema: strings.Clone(schema), digest: e.digest, text: e.digestText}
				fresh.stats.init()
				fresh.stats.first.Store(now)
				fresh.stats.last.Store(now)
			}
			if t.index[i].CompareAndSwap(nil, fresh) {
				return fresh
			}
			r = t.index[i].Load() // another goroutine took the slot
		}
		if r.digest == e.digest && r.schema == schema {
			if fresh != nil {
				t.n.Add(-1) // another goroutine made it first
			}
			return r
		}
	}
	if fresh != nil {
		t.n.Add(-1)
	}
	t.lost.Add(1)
	t.null.stats.first.CompareAndSwap(0, now)
	return &t.null
}

// records appends the table's records, the NULL row first if it counted
// anything.
func (t *digestTable) records(out []*digestRecord) []*digestRecord {
	if t.null.stats.count.Load() != 0 {
		out = append(out, &t.null)
	}
	for i := range t.index {
		if r := t.index[i].Load(); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// digestRecord returns the record statement entry e counts in under schema:
// the entry's binding when it is current, else the table's (bound for the
// next statement).
func (s *Schema) digestRecord(e *stmtEntry, schema string, now uint64) *digestRecord {
	tbl := s.digests.Load()
	if b := e.bind.Load(); b != nil && b.table == tbl && b.schema == schema {
		if b.rec == &tbl.null {
			tbl.lost.Add(1)
		}
		return b.rec
	}
	r := tbl.find(schema, e, now)
	e.bind.Store(&digestBinding{table: tbl, schema: schema, rec: r})
	return r
}

// aggregate counts one statement: timed ones add their wait, to the
// extremes and to the histogram; every non-zero counter adds. end is when it
// ended, ps.
func (d *digestStats) aggregate(timed bool, wait, end uint64, x *stmtCounts) {
	d.count.Add(1)
	if timed {
		d.sum.Add(wait)
		for m := d.min.Load(); wait < m && !d.min.CompareAndSwap(m, wait); m = d.min.Load() {
		}
		for m := d.max.Load(); wait > m && !d.max.CompareAndSwap(m, wait); m = d.max.Load() {
		}
		d.hist[histBucket(wait)].Add(1)
	}
	d.x.add(x)
	for l := d.last.Load(); end > l+lastSeenGrain && !d.last.CompareAndSwap(l, end); l = d.last.Load() {
	}
}

// lastSeenGrain is how far LAST_SEEN may lag: a microsecond, the column's
// resolution. A digest's statements ending closer together than that skip
// the compare-and-swap on a word they all share.
const lastSeenGrain = 1_000_000

// sample replaces the digest's query sample by text if MySQL's rule says
// so: there is none, this statement waited longer, or the sample is older
// than the maximum age (ps; 0: no limit).
func (d *digestStats) maybeSample(text string, timed bool, wait, end, maxAge, maxText uint64) {
	cur := d.sample.Load()
	if cur != nil && !(timed && wait > cur.wait) && !(maxAge != 0 && end-cur.seen > maxAge) {
		return
	}
	q := &querySample{seen: end, wait: wait}
	q.text, q.truncated = clipText(text, int(maxText))
	d.sample.CompareAndSwap(cur, q) // a concurrent replacement wins: one sample is as good as another
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
// text ends in "...", which replaces its last three bytes (and a character
// they split).
func showText(text string, cut bool) string {
	if !cut {
		return text
	}
	t := text[:max(len(text)-3, 0)]
	if k := lastRuneStart(t); len(t) > 0 && !utf8.FullRuneInString(t[k:]) {
		t = t[:k]
	}
	return t + "..."
}

// lastRuneStart returns where the last character of s begins.
func lastRuneStart(s string) int {
	i := len(s) - 1
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return max(i, 0)
}
