package pfscore

import (
	"regexp"
	"strings"
	"testing"
)

func TestLike(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"wait/synch/%", "wait/synch/mutex/app/cache", true},
		{"wait/synch/%", "wait/io/file/app/log", false},
		{"%", "", true},
		{"%", "anything", true},
		{"", "", true},
		{"", "x", false},
		{"wait/io/file/%", "wait/io/file/", true},
		{"%history%", "events_waits_history_long", true},
		{"%history", "events_waits_history_long", false},
		{"events\\_waits\\_current", "events_waits_current", true},
		{"events\\_waits\\_current", "eventsXwaitsXcurrent", false},
		{"events_waits_current", "eventsXwaitsXcurrent", true}, // '_' is one character
		{"a_c", "ac", false},
		{"WAIT/SYNCH/%", "wait/synch/cond/x/y", true}, // case-insensitive
		{"%a%b%c", "xxaxxbxxbxxc", true},
		{"%a%b%c", "xxaxxbxxbxxd", false},
		{"a%%b", "ab", true},
		{"100\\%", "100%", true},
		{"100\\%", "1000", false},
		{"trail\\", "trail\\", true},
		{"trail\\", "trail", false},
		{"%/mutex/%", "wait/synch/mutex/a/b", true},
		{"/tmp/_.log", "/tmp/é.log", true},   // '_' is one character, not one byte
		{"/tmp/__.log", "/tmp/é.log", false}, // é is one character
		{"%é", "café", true},
		{"caf_", "café", true},
	} {
		if got := Like(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Like(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// likeRegexp is a reference implementation through regexp.
func likeRegexp(pattern, s string) bool {
	var b strings.Builder
	b.WriteString("(?is)^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
			} else {
				b.WriteString(`\\`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()).MatchString(s)
}

func FuzzLike(f *testing.F) {
	for _, seed := range [][2]string{
		{"wait/synch/%", "wait/synch/mutex/a/b"},
		{"%a_b%", "xxaxbyy"},
		{"a\\%b", "a%b"},
		{"%%_%", "q"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 64 {
			return
		}
		for _, c := range []byte(pattern + s) { // the reference folds Unicode; Like folds ASCII
			if c >= 0x80 {
				return
			}
		}
		if got, want := Like(pattern, s), likeRegexp(pattern, s); got != want {
			t.Fatalf("Like(%q, %q) = %v, regexp says %v", pattern, s, got, want)
		}
	})
}

func BenchmarkLike(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Like("wait/synch/%/app/%", "wait/synch/mutex/app/cache_lock")
	}
}
