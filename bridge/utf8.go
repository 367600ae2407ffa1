package bridge

import (
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// Every string the bridge hands to OpenTelemetry is valid UTF-8. The engine
// keeps names as the application gave them (a file named in Latin-1, a user
// taken from a request header), and OTLP's strings are protobuf strings,
// which gRPC refuses to marshal unless they are UTF-8: one such value in a
// metric's attributes would fail the whole export, every interval, while
// the row exists. So invalid bytes become U+FFFD, as exporter's JSON does
// (two names that differ only in invalid bytes become one), and the rest
// of the export goes on.

// validString returns s, or s with each run of invalid bytes replaced by
// U+FFFD.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// validAttrs makes the string values of kvs valid UTF-8 in place.
func validAttrs(kvs []attribute.KeyValue) {
	for i, kv := range kvs {
		switch kv.Value.Type() {
		case attribute.STRING:
			if s := kv.Value.AsString(); !utf8.ValidString(s) {
				kvs[i] = kv.Key.String(validString(s))
			}
		case attribute.STRINGSLICE:
			ss := kv.Value.AsStringSlice()
			bad := false
			for j, s := range ss {
				if !utf8.ValidString(s) {
					ss[j], bad = validString(s), true
				}
			}
			if bad {
				kvs[i] = kv.Key.StringSlice(ss)
			}
		}
	}
}

// validSpans makes every string of spans valid UTF-8 in place: names,
// status messages and attribute values, the events' too.
func validSpans(spans []Span) {
	for i := range spans {
		sp := &spans[i]
		sp.Name = validString(sp.Name)
		sp.StatusMessage = validString(sp.StatusMessage)
		validAttrs(sp.Attributes)
		for j := range sp.Events {
			ev := &sp.Events[j]
			ev.Name = validString(ev.Name)
			validAttrs(ev.Attributes)
		}
	}
}
