package pfscore

// Run-time instrument rules: an InstrumentPolicy decides the ENABLED and
// TIMED of classes, those registered already and those registering later,
// after New. Start-up rules (WithInstrument, OTELPFS_INSTRUMENT) are
// strings fixed at New; a policy is a function, set and replaced at run
// time. Package bridge makes one from OpenTelemetry views, whose selectors
// are functions too.

// An InstrumentPolicy decides the setup_instruments row of a class: given
// its name and kind, it returns the class's ENABLED and TIMED and true, or
// false to leave the class as the start-up rules and its registration
// defaults say. TIMED is ignored for kinds that cannot be timed (memory,
// thread): a thread class's HISTORY is not the policy's.
//
// A policy runs while the schema holds its setup lock (setupMu), once per
// class: it must be quick, must not block, and must not call the Schema.
type InstrumentPolicy func(name string, kind Kind) (enabled, timed, ok bool)

// WithInstrumentPolicy sets the schema's instrument policy at New: every
// class, the built-in idle and transaction included, starts as p says,
// where p decides, over the start-up rules. By default there is none; see
// SetInstrumentPolicy.
func WithInstrumentPolicy(p InstrumentPolicy) Option {
	return optionFunc(func(c config) config {
		c.instrumentPolicy = p
		return c
	})
}

// SetInstrumentPolicy replaces the schema's instrument policy with p (nil
// removes it) and applies it, as one step: every registered class that p
// decides takes p's ENABLED and TIMED now (as UpdateInstruments would set
// them), and every class registering later starts as p says, over the
// start-up rules. It returns the number of registered classes p decided.
//
// A later UpdateInstruments (or UPDATE setup_instruments) changes the
// classes it matches as usual: the policy is consulted again only for
// classes registering later, and by the next SetInstrumentPolicy.
//
// Invariant, against a concurrent Register: the policy is stored, and the
// registered classes updated, under setupMu, where Register also consults
// the policy and publishes the new class. So a class either registered
// before (and is in the class list this call updates) or registers after
// (and reads p): none keeps the previous policy's setup.
func (s *Schema) SetInstrumentPolicy(p InstrumentPolicy) int {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	s.policy = p
	if p == nil {
		return 0
	}
	global := s.consumerOn(ConsumerGlobalInstrumentation)
	n := 0
	for _, c := range s.Classes() {
		enabled, timed, ok := p(c.name, c.kind)
		if !ok {
			continue
		}
		n++
		c.flags.Store(deriveClassFlags(instrumentsUpdate(&enabled, &timed)(c, c.flags.Load()), global))
	}
	return n
}

// policyFlags returns the ENABLED and TIMED a class registering now starts
// with: the policy's, where it decides, else enabled and timed (from the
// start-up rules and the defaults). s.setupMu is held.
func (s *Schema) policyFlags(name string, kind Kind, enabled, timed bool) (bool, bool) {
	if s.policy == nil {
		return enabled, timed
	}
	pe, pt, ok := s.policy(name, kind)
	if !ok {
		return enabled, timed
	}
	if kind.Timed() {
		timed = pt
	}
	return pe, timed
}
