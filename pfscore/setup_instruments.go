package pfscore

import (
	"fmt"
	"strings"
)

// An instrumentRule is one start-up rule: pattern=value.
type instrumentRule struct {
	pattern        string
	exact          bool // no wildcard: an exact name
	enabled, timed bool
	seq            int // order given; later wins ties
}

func parseInstrumentRule(spec string, seq int) (instrumentRule, error) {
	i := strings.LastIndexByte(spec, '=')
	if i < 0 {
		return instrumentRule{}, fmt.Errorf("instrument rule %q: want name-or-pattern=ON|OFF|COUNTED", spec)
	}
	pattern, val := strings.TrimSpace(spec[:i]), strings.TrimSpace(spec[i+1:])
	if err := CheckPattern(pattern); err != nil {
		return instrumentRule{}, fmt.Errorf("instrument rule %q: %w", spec, err)
	}
	// A name with an escape is matched as a LIKE pattern, which unescapes it.
	r := instrumentRule{pattern: pattern, exact: !isPattern(pattern) && !strings.Contains(pattern, "\\"), seq: seq}
	if strings.EqualFold(val, "COUNTED") {
		r.enabled = true
		return r, nil
	}
	on, err := ParseFlag(val)
	if err != nil {
		return instrumentRule{}, fmt.Errorf("instrument rule %q: value %q: want ON, OFF or COUNTED", spec, val)
	}
	r.enabled, r.timed = on, on
	return r, nil
}

// CheckPattern validates a LIKE pattern for a setup table's NAME column:
// printable ASCII, not empty, not too long. It returns ErrBadPattern.
func CheckPattern(pattern string) error {
	if pattern == "" {
		return fmt.Errorf("%w: empty", ErrBadPattern)
	}
	if len(pattern) > 2*maxNameLength {
		return fmt.Errorf("%w: longer than %d bytes", ErrBadPattern, 2*maxNameLength)
	}
	for i := 0; i < len(pattern); i++ {
		if c := pattern[i]; c < 0x20 || c >= 0x7f {
			return fmt.Errorf("%w %q: byte %#x (patterns are printable ASCII)", ErrBadPattern, pattern, c)
		}
	}
	return nil
}

// better reports whether rule r takes precedence over q.
func (r *instrumentRule) better(q *instrumentRule) bool {
	if r.exact != q.exact {
		return r.exact
	}
	if len(r.pattern) != len(q.pattern) {
		return len(r.pattern) > len(q.pattern)
	}
	return r.seq > q.seq
}

// startupFlags returns the ENABLED and TIMED a newly registered class starts
// with: the best matching start-up rule, else the registration default.
func startupFlags(rules []instrumentRule, name string, enabled, timed bool) (bool, bool) {
	var best *instrumentRule
	for i := range rules {
		r := &rules[i]
		if (r.exact && strings.EqualFold(r.pattern, name)) || (!r.exact && Like(r.pattern, name)) {
			if best == nil || r.better(best) {
				best = r
			}
		}
	}
	if best != nil {
		return best.enabled, best.timed
	}
	return enabled, timed
}

// SetupInstrumentsRow is a row of setup_instruments.
type SetupInstrumentsRow struct {
	Name          string     `pfs:"NAME,dim"`
	Enabled       bool       `pfs:"ENABLED,attr"`
	Timed         *bool      `pfs:"TIMED,attr"` // nil (NULL) for classes that cannot be timed
	Properties    Properties `pfs:"PROPERTIES,attr"`
	Volatility    int        `pfs:"VOLATILITY,attr"`
	Documentation string     `pfs:"DOCUMENTATION,text,null"`
}

// SetupInstruments returns setup_instruments, in registration order.
func (s *Schema) SetupInstruments() []SetupInstrumentsRow {
	classes := s.Classes()
	rows := make([]SetupInstrumentsRow, len(classes))
	for i, c := range classes {
		f := c.flags.Load()
		rows[i] = SetupInstrumentsRow{
			Name:          c.name,
			Enabled:       f&flagSetEnabled != 0,
			Properties:    c.props,
			Volatility:    c.volatility,
			Documentation: c.doc,
		}
		if c.kind.Timed() {
			t := f&flagSetTimed != 0
			rows[i].Timed = &t
		}
	}
	return rows
}

// UpdateInstruments is UPDATE setup_instruments SET ENABLED=…, TIMED=…
// WHERE NAME LIKE pattern. A nil enabled or timed leaves that column as it
// is; TIMED is ignored for classes that cannot be timed. It returns the
// number of rows matched. The change is seen by the next event that starts;
// an event already started ends as it began.
func (s *Schema) UpdateInstruments(pattern string, enabled, timed *bool) (int, error) {
	return s.updateClasses(pattern, func(c *Class) bool { return true }, instrumentsUpdate(enabled, timed))
}

// instrumentsUpdate sets ENABLED and TIMED, where not nil.
func instrumentsUpdate(enabled, timed *bool) func(*Class, uint32) uint32 {
	return func(c *Class, f uint32) uint32 {
		if enabled != nil {
			f = setBit(f, flagSetEnabled, *enabled)
		}
		if timed != nil && c.kind.Timed() {
			f = setBit(f, flagSetTimed, *timed)
		}
		return f
	}
}

// updateClasses applies update to the flags of every class that match
// selects and whose name is LIKE pattern, re-deriving the effective switch,
// and returns how many it changed. Setup updates are serialized by setupMu.
func (s *Schema) updateClasses(pattern string, match func(*Class) bool, update func(*Class, uint32) uint32) (int, error) {
	if err := CheckPattern(pattern); err != nil {
		return 0, err
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	global := s.consumerOn(ConsumerGlobalInstrumentation)
	n := 0
	for _, c := range s.Classes() {
		if !match(c) || !Like(pattern, c.name) {
			continue
		}
		n++
		c.flags.Store(deriveClassFlags(update(c, c.flags.Load()), global))
	}
	return n, nil
}

func setBit(f, bit uint32, on bool) uint32 {
	if on {
		return f | bit
	}
	return f &^ bit
}

// deriveClassFlags sets flagOn from ENABLED and global_instrumentation.
func deriveClassFlags(f uint32, global bool) uint32 {
	return setBit(f, flagOn, global && f&flagSetEnabled != 0)
}
