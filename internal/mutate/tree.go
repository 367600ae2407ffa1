package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// A tree is a snapshot of the module's source files, taken once, so that the
// baseline and every mutation test the same code even while the working tree
// changes under them.
type tree struct {
	files  map[string]file // by slash path relative to the module root
	nested []string        // nested modules skipped, as "dir/"
}

type file struct {
	data []byte
	perm fs.FileMode
}

// snapshot reads the files git tracks or would track (uncommitted and
// untracked-but-not-ignored work included) under root, the repository root,
// except those of nested modules.
func snapshot(root string) (*tree, error) {
	cmd := exec.Command("git", "ls-files", "-z", "-co", "--exclude-standard")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var names []string
	for n := range strings.SplitSeq(string(out), "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	t := &tree{files: map[string]file{}}
	for _, n := range names {
		if path.Base(n) == "go.mod" && n != "go.mod" {
			t.nested = append(t.nested, path.Dir(n)+"/")
		}
	}
	sort.Strings(t.nested)
	if !slices.Contains(names, "go.mod") {
		return nil, fmt.Errorf("%s: no go.mod among the files git lists", root)
	}
	for _, n := range names {
		if t.inNested(n) {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(n))
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			continue // a submodule or a link to a directory
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		t.files[n] = file{data: data, perm: fi.Mode().Perm()}
	}
	return t, nil
}

func (t *tree) inNested(name string) bool {
	for _, d := range t.nested {
		if strings.HasPrefix(name, d) {
			return true
		}
	}
	return false
}

// apply returns the contents of the files m changes, its edits applied in
// order. It fails, naming the mutation, if an edit's old text is not found
// exactly once: a mutation list that no longer matches the code must not
// pass silently as "survived" or "killed".
func apply(m mutation, files map[string]file) (map[string][]byte, error) {
	changed := map[string][]byte{}
	for i, e := range m.edits {
		cur, ok := changed[e.file]
		if !ok {
			f, found := files[e.file]
			if !found {
				return nil, fmt.Errorf("mutation %s (edit %d): %s: no such file", m.name, i+1, e.file)
			}
			cur = f.data
		}
		if e.old == "" || e.old == e.new {
			return nil, fmt.Errorf("mutation %s (edit %d): %s: empty edit", m.name, i+1, e.file)
		}
		if n := bytes.Count(cur, []byte(e.old)); n != 1 {
			return nil, fmt.Errorf("mutation %s (edit %d): %s: old text found %d times, want exactly once:\n%s",
				m.name, i+1, e.file, n, indent(e.old))
		}
		changed[e.file] = bytes.Replace(cur, []byte(e.old), []byte(e.new), 1)
	}
	return changed, nil
}

func indent(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return "\t| " + strings.ReplaceAll(s, "\n", "\n\t| ")
}

// write makes dir a fresh copy of the tree, with the files in changed
// replaced.
func (t *tree) write(dir string, changed map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for name, f := range t.files {
		data := f.data
		if c, ok := changed[name]; ok {
			data = c
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, f.perm|0o200); err != nil {
			return err
		}
	}
	return nil
}
