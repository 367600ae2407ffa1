package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// envChromium names the browser TestBrowserTableView drives; by default
// chromium on PATH (Debian's package: apt-get install chromium).
const envChromium = "OTELPFS_CHROMIUM"

// chromiumBinary returns the Chromium binary: $OTELPFS_CHROMIUM, else
// chromium on PATH.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envChromium); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing(t, "%s=%s: not an executable file; install Debian's chromium (apt-get install chromium), or point %s at one", envChromium, p, envChromium)
		}
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		missing(t, "no chromium on PATH: install Debian's package (apt-get install chromium), or set %s", envChromium)
	}
	return p
}

// TestBrowserTableView drives the demo's /debug/pfs pages in headless
// Chromium as a person would: the index lists the tables; a click on a
// numeric column's header orders the rows biggest first with ▼ on it, a
// second click smallest first with ▲; a bad where comes back inline with
// the form as typed; the form's placeholders are the table's own columns,
// and the suggested where runs. Screenshots go to the test's temporary
// directory, their paths in the log.
func TestBrowserTableView(t *testing.T) {
	chrome := chromiumBinary(t)
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo")
	if out, err := exec.Command("go", "build", "-o", demo, "github.com/otelpfs/otelpfs/examples/demo").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/demo: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	p := start(t, dir, "demo", nil, demo, "-duration", "90s", "-addr", addr, "-sql-addr", "") // stopped by the test's cleanup
	base := "http://" + addr + "/debug/pfs"
	p.waitTCP(addr)
	waitForWaits(t, p, base+"/tables/events_waits_summary_global_by_event_name?format=json&where=COUNT_STAR+>+0")

	chromeLog, err := os.Create(filepath.Join(dir, "chromium.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer chromeLog.Close()
	// The machine's network is closed: without these flags Chromium waits
	// on refused connections (updates, sync, QUIC probes) and hangs.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")),
		chromedp.WindowSize(1400, 1000),
		chromedp.CombinedOutput(chromeLog),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	b := &browser{t: t, ctx: ctx, diag: func() string {
		log, _ := os.ReadFile(chromeLog.Name())
		return fmt.Sprintf("chromium's output:\n%s\ndemo's output:\n%s", lastBytes(log, 4000), p.output())
	}}

	// The index lists the tables, each a link.
	b.load("index", chromedp.Navigate(base+"/"))
	tables := get(b, "table list", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#tables tbody td:first-child a")).map(a => a.textContent)`))
	for _, want := range []string{"events_waits_summary_global_by_event_name", "setup_instruments", "performance_timers"} {
		if !slices.Contains(tables, want) {
			t.Errorf("the index does not list %s (it lists %d tables: %v)", want, len(tables), tables)
		}
	}
	if len(tables) < 20 {
		t.Errorf("the index lists %d tables", len(tables))
	}
	// Its ROWS column sorts in the page: biggest first, then smallest.
	const rowsHead = `#tables th[data-col="ROWS"]`
	for _, want := range []struct{ sort, arrow string }{{"descending", "▼"}, {"ascending", "▲"}} {
		b.do("click on ROWS", chromedp.Click(chromedp.CSS(rowsHead)))
		if got, arrow := b.sortState(rowsHead, want.sort); got != want.sort || arrow != want.arrow {
			t.Errorf("index after a click on ROWS: aria-sort %q, arrow %q; want %q, %q", got, arrow, want.sort, want.arrow)
		}
		b.checkOrder("#tables", "ROWS", want.sort == "descending")
	}

	// To the table by its link; then a click on COUNT_STAR: biggest first.
	const count = `th[data-col="COUNT_STAR"]`
	b.load("open events_waits_summary_global_by_event_name", chromedp.Click(chromedp.CSS(`#tables a[href$="/tables/events_waits_summary_global_by_event_name"]`)))
	b.load("first click on COUNT_STAR", chromedp.Click(chromedp.CSS(count)))
	if got := b.attr(count, "aria-sort"); got != "descending" {
		t.Errorf("after the first click COUNT_STAR's aria-sort is %q", got)
	}
	if arrow := get(b, "arrow", chromedp.TextContent(chromedp.CSS(count+" .arrow"))); arrow != "▼" {
		t.Errorf("after the first click COUNT_STAR shows %q, want ▼", arrow)
	}
	b.checkOrder("#t", "COUNT_STAR", true)
	if got := b.value("order"); got != "COUNT_STAR desc" {
		t.Errorf("after the click the order field says %q", got)
	}
	b.screenshot(dir, "sorted-desc")

	b.load("second click on COUNT_STAR", chromedp.Click(chromedp.CSS(count)))
	if got := b.attr(count, "aria-sort"); got != "ascending" {
		t.Errorf("after the second click COUNT_STAR's aria-sort is %q", got)
	}
	if arrow := get(b, "arrow", chromedp.TextContent(chromedp.CSS(count+" .arrow"))); arrow != "▲" {
		t.Errorf("after the second click COUNT_STAR shows %q, want ▲", arrow)
	}
	b.checkOrder("#t", "COUNT_STAR", false)

	// The placeholders are the table's own columns.
	wherePH, orderPH, limitPH := b.attr("#where", "placeholder"), b.attr("#order", "placeholder"), b.attr("#limit", "placeholder")
	if wherePH != "EVENT_NAME LIKE 'wait/%' AND COUNT_STAR > 0" || orderPH != "SUM_TIMER_WAIT desc" || limitPH == "" {
		t.Errorf("placeholders: where %q, order %q, limit %q", wherePH, orderPH, limitPH)
	}

	// A bad where, typed: the error on the page, the form as typed.
	const badWhere = "NO_SUCH_COLUMN > 1"
	b.do("type a bad where", chromedp.SendKeys(chromedp.ID("where"), badWhere), chromedp.SendKeys(chromedp.ID("limit"), "5"))
	b.load("submit the bad where", chromedp.Click(chromedp.CSS(`#filter input[type=submit]`)))
	errText := get(b, "inline error", chromedp.Text(chromedp.ID("error"), chromedp.NodeVisible))
	if !strings.Contains(errText, "NO_SUCH_COLUMN") || !strings.Contains(errText, "bad query") {
		t.Errorf("inline error %q: want the bad query and its column", errText)
	}
	if w, o, l := b.value("where"), b.value("order"), b.value("limit"); w != badWhere || o != "COUNT_STAR asc" || l != "5" {
		t.Errorf("form after the error: where %q, order %q, limit %q; want %q, %q, %q", w, o, l, badWhere, "COUNT_STAR asc", "5")
	}
	b.screenshot(dir, "bad-where")

	// The suggested where, typed in, runs: rows and no error.
	get(b, "clear the where", chromedp.Evaluate[bool](`(document.getElementById("where").value = "", true)`))
	b.do("type the suggested where", chromedp.SendKeys(chromedp.ID("where"), wherePH))
	b.load("submit the suggested where", chromedp.Click(chromedp.CSS(`#filter input[type=submit]`)))
	nrows := get(b, "rows", chromedp.Evaluate[int](`document.querySelectorAll("#t tbody tr").length`))
	nerrors := get(b, "errors", chromedp.Evaluate[int](`document.querySelectorAll("#error").length`))
	if nrows == 0 || nrows > 5 || nerrors != 0 {
		t.Errorf("the suggested where, limit 5: %d rows, %d errors", nrows, nerrors)
	}

	// Another table, other columns: setup_instruments' NAME.
	b.load("setup_instruments", chromedp.Click(chromedp.CSS(`nav a[href$="/tables/setup_instruments"]`)))
	wherePH, orderPH = b.attr("#where", "placeholder"), b.attr("#order", "placeholder")
	if !strings.HasPrefix(wherePH, "NAME LIKE '") || !strings.HasSuffix(wherePH, "/%'") || orderPH != "NAME" {
		t.Errorf("setup_instruments' placeholders: where %q, order %q", wherePH, orderPH)
	}
}

// A browser is a Chromium tab a test drives; every failure fails the test
// with diag's output.
type browser struct {
	t    *testing.T
	ctx  context.Context
	diag func() string
}

// get runs a and returns its value.
func get[T any](b *browser, step string, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v\n%s", step, err, b.diag())
	}
	return v
}

// do runs actions that return nothing.
func (b *browser) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", step, err, b.diag())
	}
}

// load runs trigger (a navigation, a click on a link) and waits for the
// page it loads.
func (b *browser) load(step string, trigger chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	get(b, step, chromedp.WaitEvent(page.LoadEventFired, nil, trigger))
}

// attr returns an attribute of the element sel selects ("" without one).
func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	return get(b, sel+" "+name, chromedp.AttributeValue(chromedp.CSS(sel), name)).Value
}

// sortState returns the aria-sort and the arrow of the column head sel
// selects, read together in the page, once aria-sort is want or after 10
// s: the click that sorts in the page may return before its handler has
// run (a CI run read the old aria-sort and the new arrow).
func (b *browser) sortState(sel, want string) (sort, arrow string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const th = document.querySelector(%q); const a = th.querySelector(".arrow");
		return [th.getAttribute("aria-sort") || "", a ? a.textContent : ""]; })()`, sel)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st := get(b, sel+" sort state", chromedp.Evaluate[[]string](js))
		if len(st) != 2 {
			b.t.Fatalf("%s sort state: %v", sel, st)
		}
		if st[0] == want || time.Now().After(deadline) {
			return st[0], st[1]
		}
	}
}

// value returns the value of the input with that id.
func (b *browser) value(id string) string {
	b.t.Helper()
	return get(b, id+" value", chromedp.Value(chromedp.ID(id)))
}

// screenshot writes the page as dir/name.png and logs where.
func (b *browser) screenshot(dir, name string) {
	b.t.Helper()
	buf := get(b, "screenshot "+name, chromedp.FullScreenshot(100))
	cfg, err := png.DecodeConfig(bytes.NewReader(buf))
	if err != nil || cfg.Width < 800 || cfg.Height < 400 {
		b.t.Fatalf("screenshot %s: %v, %dx%d", name, err, cfg.Width, cfg.Height)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s (%dx%d)", path, cfg.Width, cfg.Height)
}

// checkOrder reads column col of the page's table (a CSS selector) and
// checks that it is ordered (descending if desc) as integers, over at
// least two distinct values.
func (b *browser) checkOrder(table, col string, desc bool) {
	b.t.Helper()
	vals := get(b, "read "+col, chromedp.Evaluate[[]string](fmt.Sprintf(`(() => {
		const t = document.querySelector(%q);
		const i = Array.from(t.querySelectorAll("thead th")).findIndex(th => th.dataset.col === %q);
		return Array.from(t.querySelectorAll("tbody tr")).map(r => r.cells[i].dataset.v);
	})()`, table, col)))
	distinct := map[string]bool{}
	var prev *big.Int
	for i, v := range vals {
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			b.t.Fatalf("%s row %d: %q is not an integer", col, i, v)
		}
		if prev != nil && ((desc && n.Cmp(prev) > 0) || (!desc && n.Cmp(prev) < 0)) {
			b.t.Fatalf("%s out of order (desc=%v) at row %d: %s after %s; column: %v", col, desc, i, n, prev, vals)
		}
		prev = n
		distinct[v] = true
	}
	if len(distinct) < 2 {
		b.t.Fatalf("%s has %d distinct values in %d rows: the order proves nothing", col, len(distinct), len(vals))
	}
}

// waitForWaits waits until url (a table's JSON) has at least two rows,
// failing the test if the demo exits or 20 s pass first.
func waitForWaits(t *testing.T, p *process, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var res struct{ Rows [][]any }
		resp, err := http.Get(url)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&res)
			resp.Body.Close()
		}
		if err == nil && len(res.Rows) >= 2 {
			return
		}
		if p.exited() {
			t.Fatalf("the demo exited (%v):\n%s", p.err, p.output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d rows after 20 s (%v):\n%s", url, len(res.Rows), err, p.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func lastBytes(b []byte, n int) string {
	if len(b) > n {
		return "..." + string(b[len(b)-n:])
	}
	return string(b)
}
