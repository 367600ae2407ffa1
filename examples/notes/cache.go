package notes

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/otelpfs/otelpfs/instrument"
)

// A noteCache holds rendered notes by id, at most max of them, behind the
// kit's cache lock; each entry's bytes count on the kit's accountant while
// the entry is cached. When full, a put evicts the entry the clock hand
// points at (a round robin over the slots: cheap, and fair enough for a
// demo).
type noteCache struct {
	k       *kit
	max     int
	entries map[int64]*cacheEntry // guarded by k.cacheLock
	slots   []int64               // the ids cached, for eviction; guarded by k.cacheLock
	hand    int                   // the next slot to evict; guarded by k.cacheLock
	removed uint64                // removals so far; guarded by k.cacheLock
}

type cacheEntry struct {
	body   []byte
	tenant string
	slot   int
	mem    instrument.Memory
}

func newNoteCache(max int, k *kit) *noteCache {
	return &noteCache{k: k, max: max, entries: make(map[int64]*cacheEntry, max)}
}

// get returns the cached body of note id and its tenant. The body is the
// cache's: the caller must not change it. On a miss, gen is what put
// needs to know whether a note may have been deleted since.
func (c *noteCache) get(ctx context.Context, id int64) (body []byte, tenant string, gen uint64, ok bool) {
	c.k.cacheLock.LockCtx(ctx)
	e, ok := c.entries[id]
	if ok {
		body, tenant = e.body, e.tenant
	}
	gen = c.removed
	c.k.cacheLock.Unlock()
	return body, tenant, gen, ok
}

// put caches a copy of body for note id, read after the get that
// returned gen, and returns the copy. If an entry was removed since that
// get (the note may be the one deleted), it caches nothing and returns
// body: the read was before the deletion, the next one will not be.
func (c *noteCache) put(ctx context.Context, id int64, tenant string, body []byte, gen uint64) ([]byte, string) {
	e := &cacheEntry{body: append([]byte(nil), body...), tenant: tenant}
	e.mem = c.k.cacheMem.alloc(ctx, len(e.body)+len(tenant)+64) // 64: the entry and its map slot, roughly
	c.k.cacheLock.LockCtx(ctx)
	if c.removed != gen {
		c.k.cacheLock.Unlock()
		c.k.cacheMem.free(&e.mem)
		return e.body, tenant
	}
	if old, ok := c.entries[id]; ok { // another request got there first
		c.k.cacheLock.Unlock()
		c.k.cacheMem.free(&e.mem)
		return old.body, old.tenant
	}
	var evicted *cacheEntry
	if len(c.slots) < c.max {
		e.slot = len(c.slots)
		c.slots = append(c.slots, id)
	} else {
		e.slot = c.hand
		evicted = c.entries[c.slots[c.hand]]
		delete(c.entries, c.slots[c.hand])
		c.slots[c.hand] = id
		c.hand = (c.hand + 1) % c.max
	}
	c.entries[id] = e
	c.k.cacheLock.Unlock()
	if evicted != nil {
		c.k.cacheMem.free(&evicted.mem)
	}
	return e.body, tenant
}

// remove drops note id from the cache, and makes the puts of the gets
// before it cache nothing.
func (c *noteCache) remove(ctx context.Context, id int64) {
	c.k.cacheLock.LockCtx(ctx)
	c.removed++
	e, ok := c.entries[id]
	if ok {
		delete(c.entries, id)
		last := len(c.slots) - 1
		if e.slot != last { // fill the hole with the last slot
			moved := c.slots[last]
			c.slots[e.slot] = moved
			c.entries[moved].slot = e.slot
		}
		c.slots = c.slots[:last]
		if c.hand >= len(c.slots) {
			c.hand = 0
		}
	}
	c.k.cacheLock.Unlock()
	if ok {
		c.k.cacheMem.free(&e.mem)
	}
}

// A note is a row of the notes table.
type note struct {
	id                 int64
	tenant, tag, title string
	body               string
	created            int64
}

func (n *note) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, n.id, 10)
	b = append(b, `,"tag":`...)
	b = appendJSONString(b, n.tag)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, n.title)
	b = append(b, `,"body":`...)
	b = appendJSONString(b, n.body)
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, n.created, 10)
	return append(b, "}\n"...)
}

// parseNote reads a new note from the request's JSON body.
func parseNote(r *http.Request) (note, error) {
	var in struct{ Tag, Title, Body string }
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&in); err != nil {
		return note{}, fmt.Errorf("the body: %w", err)
	}
	if in.Tag == "" || in.Title == "" {
		return note{}, fmt.Errorf("a note needs a tag and a title")
	}
	return note{tag: in.Tag, title: in.Title, body: in.Body}, nil
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
			i++
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, "\ufffd"...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
		}
	}
	return append(b, '"')
}
