package notes

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
)

// A Request is one request of the load.
type Request struct {
	Method, Path, Tenant, Body string
	// TraceParent, if not empty, is the W3C traceparent header the request
	// carries, as a traced caller's would.
	TraceParent string
}

// NewHTTP returns r as an *http.Request to the service at base (such as
// "http://127.0.0.1:8080"; "" for a request to hand to a Handler
// in-process).
func (r Request) NewHTTP(ctx context.Context, base string) (*http.Request, error) {
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, base+r.Path, body)
	if err != nil {
		return nil, err
	}
	if base == "" { // in-process: what a server would have filled in
		req.RemoteAddr = "192.0.2.1:4711"
		req.RequestURI = r.Path
	}
	req.Header.Set("X-Tenant", r.Tenant)
	if r.TraceParent != "" {
		req.Header.Set("traceparent", r.TraceParent)
	}
	if r.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// A Load is the demo's request mix, the same sequence for the same seed:
// mostly reads of a tenant's hottest notes (so the cache hits often),
// lists by tag, and now and then a new note, a deletion, the tenant's
// stats or a change of the page size. Tenants are not equally busy: alice
// sends half the requests, bob 30%, carol 20%. One in a hundred new notes
// has a title too long for the table, a 500. Every request carries a W3C
// traceparent header of a new trace, as if its caller traced it.
//
// A Load is not safe for concurrent use: give each client its own.
type Load struct {
	rnd  *rand.Rand
	next int64 // a guess at the next id a new note gets, for deletions
}

// NewLoad returns the load of the given seed.
func NewLoad(seed uint64) *Load {
	return &Load{rnd: rand.New(rand.NewPCG(seed, 0x6e6f746573)), next: SeedNotes + 1}
}

// Next returns the next request.
func (l *Load) Next() Request {
	r := l.next1()
	r.TraceParent = l.traceParent()
	return r
}

// traceParent returns a traceparent header of a new sampled trace.
func (l *Load) traceParent() string {
	const hex = "0123456789abcdef"
	var b [55]byte
	copy(b[:], "00-")
	for i := 3; i < 3+32+1+16; i++ {
		b[i] = hex[l.rnd.IntN(16)]
	}
	b[35] = '-'
	copy(b[52:], "-01")
	return string(b[:])
}

func (l *Load) next1() Request {
	tenant := l.tenant()
	switch p := l.rnd.IntN(100); {
	case p < 55:
		return Request{Method: "GET", Path: "/notes/" + strconv.FormatInt(l.noteOf(tenant), 10), Tenant: tenant}
	case p < 75:
		return Request{Method: "GET", Path: "/notes?tag=" + Tags[l.rnd.IntN(len(Tags))], Tenant: tenant}
	case p < 85:
		l.next++
		title := "note from the load " + strconv.Itoa(l.rnd.IntN(1000))
		if l.rnd.IntN(100) == 0 {
			title = strings.Repeat("too long ", 10) // the CHECK constraint fails
		}
		return Request{Method: "POST", Path: "/notes", Tenant: tenant,
			Body: `{"tag":"` + Tags[l.rnd.IntN(len(Tags))] + `","title":"` + title + `","body":"written by the load generator"}`}
	case p < 92:
		// One of the newest notes, perhaps another tenant's: 204 or 404.
		id := l.next - int64(l.rnd.IntN(8))
		return Request{Method: "DELETE", Path: "/notes/" + strconv.FormatInt(id, 10), Tenant: tenant}
	case p < 99:
		return Request{Method: "GET", Path: "/stats", Tenant: tenant}
	default:
		return Request{Method: "PUT", Path: "/config/page_size", Tenant: tenant, Body: strconv.Itoa(10 + l.rnd.IntN(30))}
	}
}

func (l *Load) tenant() string {
	switch p := l.rnd.IntN(10); {
	case p < 5:
		return Tenants[0]
	case p < 8:
		return Tenants[1]
	default:
		return Tenants[2]
	}
}

// noteOf returns the id of a seeded note, of the tenant 95 times in 100,
// and among its 40 hottest notes 80 times in 100.
func (l *Load) noteOf(tenant string) int64 {
	t := 0
	for i, name := range Tenants {
		if name == tenant {
			t = i
		}
	}
	if l.rnd.IntN(100) < 5 { // another tenant's: a 404
		t = (t + 1 + l.rnd.IntN(len(Tenants)-1)) % len(Tenants)
	}
	per := SeedNotes / len(Tenants)
	k := l.rnd.IntN(40)
	if l.rnd.IntN(100) >= 80 { // one of the others
		k = 40 + l.rnd.IntN(per-40)
	}
	return int64(k*len(Tenants) + t + 1)
}
