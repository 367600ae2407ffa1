package lint

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/otelpfs/otelpfs"

// allowed lists, for each package of DESIGN.md below the adapters, the otelpfs
// packages its dependency closure may contain besides itself and its own
// internal packages. The module's root internal/ packages (themselves
// standard library and one another only, which this test checks through
// their importers' closures) are open to all. Anything else not from the standard library is forbidden:
// the leaves stay standard-library only and nothing below bridge reaches
// OpenTelemetry.
var allowed = map[string][]string{
	"hwclock":    nil,
	"rings":      nil,
	"memsum":     nil,
	"digest":     nil,
	"pfscore":    {"hwclock", "rings", "memsum", "digest"},
	"instrument": {"pfscore", "hwclock", "rings", "memsum", "digest"},
}

type dep struct {
	path     string
	standard bool
}

func listDeps(t *testing.T, pkg string) []dep {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-test=false",
		"-f", "{{.ImportPath}} {{.Standard}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	var deps []dep
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("go list: unexpected line %q", line)
		}
		deps = append(deps, dep{path: path, standard: std == "true"})
	}
	return deps
}

// within reports whether path is the otelpfs package rel or one below it.
func within(path, rel string) bool {
	p := module + "/" + rel
	return path == p || strings.HasPrefix(path, p+"/")
}

func TestDependencyDirection(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found")
	}
	for pkg, extra := range allowed {
		t.Run(pkg, func(t *testing.T) {
			for _, d := range listDeps(t, module+"/"+pkg) {
				if d.standard || within(d.path, pkg) || within(d.path, "internal") {
					continue
				}
				ok := false
				for _, e := range extra {
					if d.path == module+"/"+e { // public API only, not their internals
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s depends on %s, which the dependency direction forbids", pkg, d.path)
				}
			}
		})
	}
}

// TestBridgeAboveInstrument keeps the provider API out of the OpenTelemetry
// side: bridge and exporter read pfscore, never instrument.
func TestBridgeAboveInstrument(t *testing.T) {
	for _, pkg := range []string{"bridge", "exporter"} {
		for _, d := range listDeps(t, module+"/"+pkg) {
			if within(d.path, "instrument") {
				t.Errorf("%s depends on %s", pkg, d.path)
			}
		}
	}
}

// TestCheckerCatchesViolation makes sure the rule above is not vacuous: the
// listing must see the standard library and the package itself.
func TestCheckerCatchesViolation(t *testing.T) {
	deps := listDeps(t, module+"/cmd/pfs")
	var sawSelf, sawStd bool
	for _, d := range deps {
		sawSelf = sawSelf || d.path == module+"/cmd/pfs"
		sawStd = sawStd || (d.standard && d.path == "fmt")
	}
	if !sawSelf || !sawStd {
		t.Fatalf("go list -deps output lacks cmd/pfs or fmt: %v", deps)
	}
}
