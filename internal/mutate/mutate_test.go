package main

import (
	"strings"
	"testing"
)

func TestApplyExactlyOnce(t *testing.T) {
	files := map[string]file{"a.go": {data: []byte("x := 1\ny := 1\nz := 2\n")}}
	for _, tc := range []struct {
		name  string
		edits []edit
		want  string // the new a.go, or the error's text
		fails bool
	}{
		{"once", []edit{{"a.go", "z := 2", "z := 3"}}, "x := 1\ny := 1\nz := 3\n", false},
		{"in order", []edit{{"a.go", "x := 1\n", ""}, {"a.go", "z := 2\n", "z := 2\nx := 1\n"}}, "y := 1\nz := 2\nx := 1\n", false},
		{"twice", []edit{{"a.go", ":= 1", ":= 0"}}, "found 2 times", true},
		{"missing", []edit{{"a.go", "w := 4", "w := 5"}}, "found 0 times", true},
		{"gone after an earlier edit", []edit{{"a.go", "z := 2", "z := 3"}, {"a.go", "z := 2", "z := 4"}}, "(edit 2)", true},
		{"no file", []edit{{"b.go", "x", "y"}}, "no such file", true},
		{"empty", []edit{{"a.go", "x := 1", "x := 1"}}, "empty edit", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := apply(mutation{name: "m1", edits: tc.edits}, files)
			if tc.fails {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "m1") {
					t.Fatalf("err = %v, want one naming m1 and containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got["a.go"]) != tc.want {
				t.Fatalf("a.go = %q, want %q", got["a.go"], tc.want)
			}
		})
	}
	if string(files["a.go"].data) != "x := 1\ny := 1\nz := 2\n" {
		t.Fatal("apply changed the snapshot")
	}
}

func TestMutationsWellFormed(t *testing.T) {
	names := map[string]bool{}
	for _, m := range mutations {
		if m.name == "" || m.area == "" || m.desc == "" || len(m.edits) == 0 || len(m.pkgs) == 0 {
			t.Errorf("mutation %q: missing name, area, description, edits or packages", m.name)
		}
		if names[m.name] {
			t.Errorf("mutation %q: duplicate name", m.name)
		}
		names[m.name] = true
	}
}

const sampleJSON = `{"Action":"start","Package":"github.com/otelpfs/otelpfs/p"}
{"Action":"run","Package":"github.com/otelpfs/otelpfs/p","Test":"TestA"}
{"Action":"run","Package":"github.com/otelpfs/otelpfs/p","Test":"TestA/sub"}
{"Action":"output","Package":"github.com/otelpfs/otelpfs/p","Test":"TestA/sub","Output":"    a_test.go:9: wrong\n"}
{"Action":"output","Package":"github.com/otelpfs/otelpfs/p","Test":"TestA/sub","Output":"    --- FAIL: TestA/sub (0.00s)\n"}
{"Action":"fail","Package":"github.com/otelpfs/otelpfs/p","Test":"TestA/sub"}
{"Action":"fail","Package":"github.com/otelpfs/otelpfs/p","Test":"TestA"}
{"Action":"run","Package":"github.com/otelpfs/otelpfs/p","Test":"TestOld"}
{"Action":"fail","Package":"github.com/otelpfs/otelpfs/p","Test":"TestOld"}
{"Action":"run","Package":"github.com/otelpfs/otelpfs/p","Test":"TestB"}
{"Action":"output","Package":"github.com/otelpfs/otelpfs/p","Output":"panic: runtime error: index out of range [3] with length 3\n"}
{"Action":"fail","Package":"github.com/otelpfs/otelpfs/p"}
{"Action":"start","Package":"github.com/otelpfs/otelpfs/q"}
{"Action":"run","Package":"github.com/otelpfs/otelpfs/q","Test":"TestC"}
{"Action":"pass","Package":"github.com/otelpfs/otelpfs/q","Test":"TestC"}
{"Action":"pass","Package":"github.com/otelpfs/otelpfs/q"}
`

func parsed(s string) *runResult {
	r := &runResult{pkgs: map[string]*pkgResult{}}
	r.parse(strings.NewReader(s))
	return r
}

func TestParseAndJudge(t *testing.T) {
	r := parsed(sampleJSON)
	p := r.pkgs["github.com/otelpfs/otelpfs/p"]
	if got := strings.Join(leafFailures(p), ","); got != "TestA/sub,TestOld" {
		t.Errorf("leafFailures = %s, want TestA/sub,TestOld", got)
	}
	if got := strings.Join(topRunning(p), ","); got != "TestB" {
		t.Errorf("topRunning = %s, want TestB", got)
	}
	if !strings.HasPrefix(p.crashed, "panic: runtime error") {
		t.Errorf("crashed = %q", p.crashed)
	}
	if msg := r.broken(nil); msg != "" {
		t.Errorf("broken = %q", msg)
	}
	base := parsed(`{"Action":"run","Package":"github.com/otelpfs/otelpfs/p","Test":"TestOld"}
{"Action":"fail","Package":"github.com/otelpfs/otelpfs/p","Test":"TestOld"}
{"Action":"fail","Package":"github.com/otelpfs/otelpfs/p"}
`)
	known := func(pkg, test string) bool { return base.pkgs[pkg] != nil && base.pkgs[pkg].failed[test] }
	v := judge(r, base, known, "p")
	want := "TestA/sub, crash in TestB: panic: runtime error: index out of range [3] with length 3"
	if got := strings.Join(v.reasons, ", "); !v.killed || got != want {
		t.Errorf("judge: killed %v, reasons %q; want killed, %q", v.killed, got, want)
	}
	if got := strings.Join(v.ignored, ","); got != "TestOld" {
		t.Errorf("ignored = %s, want TestOld", got)
	}
	if v := judge(parsed(`{"Action":"pass","Package":"github.com/otelpfs/otelpfs/q"}`+"\n"), nil, known, "q"); v.killed {
		t.Errorf("a passing run judged killed: %v", v.reasons)
	}
}

func TestParseBuildFailure(t *testing.T) {
	r := parsed(`{"ImportPath":"github.com/otelpfs/otelpfs/p","Action":"build-output","Output":"# github.com/otelpfs/otelpfs/p\n"}
{"ImportPath":"github.com/otelpfs/otelpfs/p","Action":"build-output","Output":"p/a.go:3:2: undefined: x\n"}
{"ImportPath":"github.com/otelpfs/otelpfs/p","Action":"build-fail"}
{"Action":"fail","Package":"github.com/otelpfs/otelpfs/p","FailedBuild":"github.com/otelpfs/otelpfs/p"}
`)
	if msg := r.broken(nil); !strings.Contains(msg, "undefined: x") {
		t.Errorf("broken = %q, want the compiler's error", msg)
	}
}

// Every mutation still applies to the repository's engine: an edit of the
// code a mutation targets must update the mutation with it, or `make
// mutation` (outside make test) stops on it.
func TestMutationsApplyToTree(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	tr, err := snapshot(root)
	if err != nil {
		t.Skip("no git tree:", err)
	}
	for _, m := range mutations {
		if _, err := apply(m, tr.files); err != nil {
			t.Error(err)
		}
	}
}
