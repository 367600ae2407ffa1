package hwclock

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestFactorFor(t *testing.T) {
	for _, tc := range []struct {
		freq, factor uint64
	}{
		{1_800_000_000, 556},       // WL#2360's example: 555.56 rounds to 556
		{3_000_000_000, 333},       // 333.3
		{2_500_000_000, 400},       // exact
		{2_596_118_000, 385},       // 385.19: this machine's TSC
		{2_000_000_000_000 / 3, 2}, // 1.5 rounds half up
		{1_000_000_000, 1_000},
		{1_000_000, 1_000_000},
		{1_000, 1_000_000_000},
		{100, 10_000_000_000},
		{1, 1_000_000_000_000},
		{5_000_000_000_000, 1}, // faster than 1 THz still counts
		{0, 0},
	} {
		if got := FactorFor(tc.freq); got != tc.factor {
			t.Errorf("FactorFor(%d) = %d, want %d", tc.freq, got, tc.factor)
		}
	}
}

func TestPicosConversion(t *testing.T) {
	// WL#2360: at 1.8 GHz, 8888 cycles are 8888*556 = 4,941,728 ps.
	c := clock{v0: 0, factor: FactorFor(1_800_000_000)}
	if got := c.picos(8888); got != 4_941_728 {
		t.Errorf("8888 cycles at 1.8 GHz = %d ps, want 4941728", got)
	}
	for _, tc := range []struct {
		c    clock
		raw  uint64
		want uint64
	}{
		{clock{v0: 1000, factor: 1000}, 1000, 0},                                  // the epoch itself
		{clock{v0: 1000, factor: 1000}, 1001, 1000},                               // 1 ns
		{clock{v0: 5, factor: 1_000_000}, 7, 2_000_000},                           // 2 us
		{clock{v0: 0, factor: 1_000_000_000}, 3, 3_000_000_000},                   // 3 ms
		{clock{v0: 10, factor: 10_000_000_000}, 11, 10_000_000_000},               // 1 tick at 100 Hz
		{clock{v0: 1 << 40, factor: 385}, 1<<40 + 2_596_118_000, 999_505_430_000}, // 1 s of TSC, 0.05% off
	} {
		if got := tc.c.picos(tc.raw); got != tc.want {
			t.Errorf("%+v.picos(%d) = %d, want %d", tc.c, tc.raw, got, tc.want)
		}
	}
}

// TestWraparound starts the clock just before the 2^64 ps horizon: the
// timestamp wraps, and durations from wrapping subtraction stay exact.
func TestWraparound(t *testing.T) {
	c := clock{v0: 0, factor: 1000}
	// 1 us before the horizon, in ns.
	startRaw := uint64(math.MaxUint64/1000) - 1000
	start := c.picos(startRaw)
	end := c.picos(startRaw + 2000) // 2 us later: past the horizon
	if end >= start {
		t.Fatalf("expected the timestamp to wrap: start %d end %d", start, end)
	}
	if wait := end - start; wait != 2_000_000 {
		t.Errorf("TIMER_WAIT across the horizon = %d ps, want 2000000", wait)
	}
	// A raw counter wrapping (after v0) converts correctly too.
	c = clock{v0: math.MaxUint64 - 10, factor: 385}
	if got := c.picos(5); got != 16*385 {
		t.Errorf("raw counter wrap: %d, want %d", got, 16*385)
	}
}

func TestWallTimeAcrossHorizon(t *testing.T) {
	const period = 1 << 64 / 1000 // ns; exact enough for the checks below
	sec := uint64(1_000_000_000_000)
	for _, tc := range []struct {
		name    string
		elapsed time.Duration // since the epoch
		ps      uint64        // the timestamp
		want    time.Duration // expected wall time since the epoch
	}{
		{"recent", 10 * time.Second, 9 * sec, 9 * time.Second},
		{"slightly ahead", 10 * time.Second, 11 * sec, 11 * time.Second},
		{"before first wrap", time.Duration(period) - time.Second, math.MaxUint64 - 2*sec + 1, time.Duration(period) - 2*time.Second},
		{"after wrap, event before it", time.Duration(period) + time.Second, math.MaxUint64 - sec + 1, time.Duration(period) - time.Second},
		{"after wrap, event after it", time.Duration(period) + 2*time.Second, sec, time.Duration(period) + time.Second},
		{"third period", 2*time.Duration(period) + 5*time.Second, 4 * sec, 2*time.Duration(period) + 4*time.Second},
	} {
		got := wallTime(tc.ps, tc.elapsed).Sub(epochWall)
		if diff := got - tc.want; diff < -time.Microsecond || diff > time.Microsecond {
			t.Errorf("%s: wallTime = epoch+%v, want epoch+%v", tc.name, got, tc.want)
		}
	}
	if got := wallTime(5*sec, time.Second); got.Sub(epochWall) != 5*time.Second {
		t.Errorf("early future timestamp: %v", got.Sub(epochWall))
	}
	// The live clock: now, converted, is now.
	before := time.Now()
	w := WallTime(Nanosecond.Now())
	after := time.Now()
	if w.Before(before.Add(-time.Millisecond)) || w.After(after.Add(time.Millisecond)) {
		t.Errorf("WallTime(now) = %v, want between %v and %v", w, before, after)
	}
}

func TestParseTimer(t *testing.T) {
	for i, name := range []string{"CYCLE", "nanosecond", "Microsecond", "MILLISECOND", "tick"} {
		got, err := ParseTimer(name)
		if err != nil || got != Timer(i) {
			t.Errorf("ParseTimer(%q) = %v, %v; want %v", name, got, err, Timer(i))
		}
		if Timer(i).String() != timerNames[i] {
			t.Errorf("String() = %q", Timer(i).String())
		}
	}
	for _, bad := range []string{"", "NONE", "CYCLES", "THREAD_CPU"} {
		if _, err := ParseTimer(bad); !errors.Is(err, ErrUnknownTimer) {
			t.Errorf("ParseTimer(%q) error = %v, want ErrUnknownTimer", bad, err)
		}
	}
}

func TestSetupTimers(t *testing.T) {
	s := NewSetupTimers()
	want := map[EventClass]Timer{
		ClassIdle:        Microsecond,
		ClassWait:        Cycle.Effective(),
		ClassStage:       Nanosecond,
		ClassStatement:   Nanosecond,
		ClassTransaction: Nanosecond,
	}
	for c, tm := range want {
		if got := s.Timer(c); got != tm {
			t.Errorf("default timer of %v = %v, want %v", c, got, tm)
		}
	}
	if got, err := s.Set("WAIT", "millisecond"); err != nil || got != Millisecond {
		t.Fatalf("Set(WAIT, millisecond) = %v, %v", got, err)
	}
	if s.Timer(ClassWait) != Millisecond {
		t.Errorf("wait timer not updated: %v", s.Timer(ClassWait))
	}
	// Errors change nothing.
	if _, err := s.Set("wait", "SUNDIAL"); !errors.Is(err, ErrUnknownTimer) {
		t.Errorf("unknown timer: err = %v", err)
	}
	if _, err := s.Set("mutex", "CYCLE"); !errors.Is(err, ErrUnknownEventClass) {
		t.Errorf("unknown class: err = %v", err)
	}
	if s.Timer(ClassWait) != Millisecond {
		t.Errorf("a failed Set changed the wait timer to %v", s.Timer(ClassWait))
	}
	rows := s.Rows()
	if len(rows) != NumEventClasses || rows[1].Name != ClassWait || rows[1].TimerName != Millisecond {
		t.Errorf("Rows() = %+v", rows)
	}
	for i, r := range rows {
		if r.Name.String() != classNames[i] {
			t.Errorf("row %d NAME = %q", i, r.Name)
		}
	}
	s.Reset()
	if s.Timer(ClassWait) != Cycle.Effective() {
		t.Errorf("Reset left wait at %v", s.Timer(ClassWait))
	}
}

// TestFallback checks the next-best timers. Under the hwclock_portable build
// tag (make test runs it) CYCLE and TICK are served by NANOSECOND and
// MILLISECOND; on a native amd64/arm64 Linux build they are their own.
func TestFallback(t *testing.T) {
	s := NewSetupTimers()
	got, err := s.Set("wait", "CYCLE")
	if err != nil {
		t.Fatal(err)
	}
	gotTick, _ := s.Set("idle", "TICK")
	rows := PerformanceTimers()
	if !cycleNative {
		if Cycle.Native() || Cycle.Effective() != Nanosecond || got != Nanosecond {
			t.Errorf("CYCLE without a cycle counter: native %v, effective %v, setup_timers %v; want NANOSECOND",
				Cycle.Native(), Cycle.Effective(), got)
		}
		if rows[Cycle].Frequency != 1_000_000_000 || Cycle.Factor() != 1000 {
			t.Errorf("fallback CYCLE row frequency %d factor %d, want NANOSECOND's", rows[Cycle].Frequency, Cycle.Factor())
		}
		// The fallback still reads a working clock.
		a := Cycle.Now()
		time.Sleep(2 * time.Millisecond)
		if d := Cycle.Now() - a; d < 2_000_000_000 {
			t.Errorf("fallback CYCLE advanced %d ps over a 2 ms sleep", d)
		}
	} else if !Cycle.Native() || got != Cycle {
		t.Errorf("native CYCLE: native %v, setup_timers %v", Cycle.Native(), got)
	}
	if !tickNative {
		if gotTick != Millisecond || rows[Tick].Frequency != 1000 {
			t.Errorf("TICK fallback: setup_timers %v, row frequency %d; want MILLISECOND, 1000", gotTick, rows[Tick].Frequency)
		}
	} else if gotTick != Tick || rows[Tick].Frequency != 100 {
		t.Errorf("native TICK: setup_timers %v, frequency %d", gotTick, rows[Tick].Frequency)
	}
}

func TestPerformanceTimers(t *testing.T) {
	rows := PerformanceTimers()
	if len(rows) != NumTimers {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	wantFreq := []uint64{0, 1_000_000_000, 1_000_000, 1_000, tickFrequency}
	for i, r := range rows {
		if r.Name != Timer(i) {
			t.Errorf("row %d is %v", i, r.Name)
		}
		if i > 0 && r.Frequency != wantFreq[i] {
			t.Errorf("%v frequency %d, want %d", r.Name, r.Frequency, wantFreq[i])
		}
		if r.Resolution == 0 {
			t.Errorf("%v resolution 0", r.Name)
		}
		// The fixed-frequency timers come fastest first; CYCLE's frequency
		// is the platform's (arm64's virtual counter often runs at 24 to
		// 100 MHz, below NANOSECOND's).
		if i > 1 && rows[i-1].Frequency < r.Frequency {
			t.Errorf("rows not ordered by frequency: %v %d before %v %d", rows[i-1].Name, rows[i-1].Frequency, r.Name, r.Frequency)
		}
	}
	if rows[Cycle].Frequency < 1_000_000 {
		t.Errorf("CYCLE frequency %d: calibration failed", rows[Cycle].Frequency)
	}
	// Coarse timers cannot show their cost in their own units.
	if rows[Millisecond].Overhead > 1 {
		t.Errorf("MILLISECOND overhead %d ms", rows[Millisecond].Overhead)
	}
}

// kernelTSCMHz returns the TSC frequency the Linux kernel measured, from its
// boot log ("tsc: Refined TSC clocksource calibration: 2596.107 MHz", or
// "tsc: Detected 2596.118 MHz processor" where the frequency is known).
func kernelTSCMHz(t *testing.T) float64 {
	out, err := exec.Command("dmesg").Output()
	if err != nil || len(out) == 0 {
		if b, err2 := os.ReadFile("/var/log/kern.log"); err2 == nil {
			out = b
		}
	}
	var mhz float64
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`tsc: Refined TSC clocksource calibration: ([0-9.]+) MHz`),
		regexp.MustCompile(`tsc: Detected ([0-9.]+) MHz processor`),
	} {
		if m := re.FindSubmatch(out); m != nil {
			mhz, _ = strconv.ParseFloat(string(m[1]), 64)
			break
		}
	}
	if mhz == 0 {
		t.Skip("the kernel's TSC calibration is not in its log here")
	}
	return mhz
}

func TestCycleFrequencyMatchesKernel(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" || !cycleNative {
		t.Skip("the kernel's TSC figure exists on linux/amd64 only")
	}
	mhz := kernelTSCMHz(t)
	got := float64(PerformanceTimers()[Cycle].Frequency) / 1e6
	if math.Abs(got-mhz)/mhz > 0.02 {
		t.Errorf("CYCLE frequency %.3f MHz, kernel measured %.3f MHz: more than 2%% apart", got, mhz)
	}
	// The start-up factor agrees too.
	if want := FactorFor(uint64(mhz * 1e6)); math.Abs(float64(Cycle.Factor())-float64(want))/float64(want) > 0.02 {
		t.Errorf("CYCLE factor %d, kernel frequency gives %d", Cycle.Factor(), want)
	}
}

// TestCycleAgreesWithNanosecond times one interval with both timers; the
// picosecond figures agree within 1%.
func TestCycleAgreesWithNanosecond(t *testing.T) {
	for range 3 { // a preemption between the reads can skew one try
		c0, n0 := Cycle.Now(), Nanosecond.Now()
		time.Sleep(50 * time.Millisecond)
		c1, n1 := Cycle.Now(), Nanosecond.Now()
		dc, dn := float64(c1-c0), float64(n1-n0)
		if math.Abs(dc-dn)/dn <= 0.01 {
			return
		}
		t.Logf("CYCLE %v, NANOSECOND %v", time.Duration(dc/1000), time.Duration(dn/1000))
	}
	t.Errorf("CYCLE and NANOSECOND disagree by more than 1%% on a 50 ms interval, three times")
}

// TestMonotonic reads every timer many times from one goroutine, yielding
// now and then so the goroutine may move between CPUs: no reading is lower
// than the one before, raw or in picoseconds.
func TestMonotonic(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for tm := range Timer(NumTimers) {
		count := n
		if tm == Tick {
			count = n / 50 // a system call each
		}
		prevRaw, prevPs := tm.Raw(), tm.Now()
		for i := range count {
			if i%1000 == 0 {
				runtime.Gosched()
			}
			raw, ps := tm.Raw(), tm.Now()
			if raw < prevRaw || ps-prevPs > 1<<63 {
				t.Fatalf("%v went backwards at read %d: raw %d -> %d, ps %d -> %d", tm, i, prevRaw, raw, prevPs, ps)
			}
			prevRaw, prevPs = raw, ps
		}
	}
}

func TestNowCycleMatchesNow(t *testing.T) {
	a := NowCycle()
	b := Cycle.Now()
	c := NowCycle()
	if b < a || c < b {
		t.Errorf("NowCycle %d, Cycle.Now %d, NowCycle %d: out of order", a, b, c)
	}
}

func TestEpoch(t *testing.T) {
	if e := Epoch(); e.IsZero() || e.After(time.Now()) {
		t.Errorf("Epoch() = %v", e)
	}
	if got := WallTime(0); !got.Equal(Epoch()) {
		t.Errorf("WallTime(0) = %v, want the epoch %v", got, Epoch())
	}
}
