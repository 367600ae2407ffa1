// Command mutate is otelpfs's mutation check: it plants known bugs in the
// engine, one at a time, and reports whether the tests notice.
//
// Each mutation is a small deliberate bug, a one-line change in most cases,
// that keeps the code compiling but breaks one property the engine promises:
// a seqlock reader that skips its closing check, a lock left out, a critical
// section split in two, a filter dropped (see mutations.go). For each one,
// mutate copies the module into a fresh temporary directory, applies the
// mutation there, and runs go test on the packages that should catch it. A
// mutation is KILLED if a test fails (or a test binary crashes or hangs), and
// SURVIVED if every test passes: then the tests have a hole where the bug
// is.
//
// # Running it
//
// From anywhere in the repository:
//
//	go run ./internal/mutate            # every mutation
//	go run ./internal/mutate -run enter # those whose name or description matches
//	go run ./internal/mutate -v         # with go test commands, timings and failures
//	go run ./internal/mutate -list      # check that every mutation applies; run nothing
//	make mutation
//
// It prints one line per mutation as it goes, then how many were killed and
// which survived. Exit status: 0 if every mutation was killed, 1 if any
// survived, 2 on a setup error (a mutation whose text is no longer in the
// code, mutated code that does not build, a baseline that cannot run).
//
// It is not part of make test: it runs go test a few dozen times, which
// takes minutes (more the first time, while the -race builds fill the cache).
//
// # How a run works
//
//   - The files are those git tracks or would track (git ls-files -co
//     --exclude-standard), read once at the start: uncommitted and new files
//     are included, and every mutation tests the same snapshot however the
//     working tree changes meanwhile. Nested modules (bench/, e2e/) are left
//     out.
//   - Every mutation must apply before anything runs: each edit's old text
//     must occur exactly once in its file, or mutate fails, naming the
//     mutation, with status 2. The list cannot rot silently.
//   - The baseline: the tests run once without any mutation. Tests that fail
//     there are ignored in the mutants' runs (and listed); a test that hangs
//     or crashes its binary there is skipped in every run (and named), since
//     it would make every mutant look killed. -baseline=false skips this.
//   - Each mutant: go test -count=1 -short -vet=off -trimpath on the
//     mutation's packages, under the -timeout cap (5m by default); a
//     mutation marked race that survives the plain run runs again under
//     -race. Killed means a test failed that passed in the baseline, or a
//     binary crashed or hung (said so: "KILLED by a hang"). The failing tests
//     are named from go test -json, the "--- FAIL:" lines.
//   - Mutations run one after another (the tests are heavy and use every
//     core). GOCACHE is the user's: -trimpath keeps the temporary
//     directory's path out of the cache keys, so only the mutated package and
//     those above it are rebuilt.
//   - A kill is checked: the tests that killed the mutant run again, three
//     times, without it. Those that fail there are flaky: they are ignored
//     from then on (listed at the end), and the mutant judged without them.
//
// The stress tests run under -short budgets, so a kill can be a matter of
// luck: a mutation killed in one run may survive the next. Read the test
// names, and rerun a surprising verdict with -run.
//
// # Adding a mutation
//
// Append an entry to the list in mutations.go:
//
//	{
//		area: "pfscore", name: "short-stable-id", race: true, pkgs: pfscorePkgs,
//		desc: "what the bug is, in a few words",
//		edits: []edit{{"pfscore/file.go", "exact old text", "new text"}},
//	},
//
// Copy old from the code, tabs and all ("\n\t" in a Go string); make it long
// enough to occur once, and new keep the code compiling (a condition
// forced with "false &&" or "if true" is the usual way to cut a check
// out). Several edits apply in order, each to the result of the previous
// ones, so a line can move. Set race for bugs about memory ordering or
// locks, which a plain run may miss. Then check it applies (-list), that it
// is killed (-run short-stable-id -v), and, if it survives, that it is not an
// equivalent mutant (a change no test could observe) before writing the test
// that kills it.
package main
