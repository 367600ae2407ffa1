package pfscore

import (
	"testing"
	"unsafe"
)

// The statement cache's site table finds an entry by the address of the
// caller's text; an address whose memory now holds another text (a string
// freed and its memory reused, stood for here by a buffer rewritten under
// an unsafe.String) must find the entry of the new text, not the old one.
func TestStmtCacheSiteReusedAddress(t *testing.T) {
	s, err := New(WithoutEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	c := s.stmtCache
	buf := []byte("SELECT a FROM t1 WHERE id = 1")
	text := unsafe.String(&buf[0], len(buf))
	e1 := c.lookup(text, false)
	if e1.text != "SELECT a FROM t1 WHERE id = 1" || c.lookup(text, false) != e1 {
		t.Fatalf("first text: entry %q", e1.text)
	}
	copy(buf, "SELECT b FROM t2 WHERE id = 2")
	e2 := c.lookup(text, false)
	if e2 == e1 || e2.text != "SELECT b FROM t2 WHERE id = 2" {
		t.Fatalf("a rewritten text at the same address found %q", e2.text)
	}
	if d1, d2 := e1.digestOf(), e2.digestOf(); d1.digest == d2.digest {
		t.Error("two texts of different tables share a digest")
	}
	// The same text at the same address, normalized or not, are two entries.
	if n := c.lookup(text, true); n == e2 || !n.normalized {
		t.Error("a normalized lookup found the plain entry")
	}
	// A constant's entry is found again, by its address.
	const q = "SELECT c FROM t3"
	if e := c.lookup(q, false); c.lookup(q, false) != e || e.site.Load() != uintptr(unsafe.Pointer(unsafe.StringData(q))) {
		t.Error("a constant text's entry was not remembered at its address")
	}
}
