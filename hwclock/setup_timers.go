package hwclock

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// An EventClass is a row of setup_timers: the class of events one timer
// serves.
type EventClass uint8

const (
	ClassIdle        EventClass = iota // idle
	ClassWait                          // wait
	ClassStage                         // stage
	ClassStatement                     // statement
	ClassTransaction                   // transaction

	// NumEventClasses is the number of rows of setup_timers.
	NumEventClasses = 5
)

var classNames = [NumEventClasses]string{"idle", "wait", "stage", "statement", "transaction"}

// String returns the setup_timers NAME: "idle", "wait", …
func (c EventClass) String() string {
	if c < NumEventClasses {
		return classNames[c]
	}
	return fmt.Sprintf("EventClass(%d)", uint8(c))
}

// ErrUnknownEventClass is returned for a setup_timers NAME that does not
// exist.
var ErrUnknownEventClass = errors.New("hwclock: unknown event class")

// ParseEventClass returns the class named name, case-insensitively.
func ParseEventClass(name string) (EventClass, error) {
	for c, n := range classNames {
		if strings.EqualFold(name, n) {
			return EventClass(c), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want one of %s)", ErrUnknownEventClass, name, strings.Join(classNames[:], ", "))
}

// DefaultTimer returns the timer setup_timers gives class c at start-up, as
// MySQL 5.7 did: CYCLE for waits, MICROSECOND for idle, NANOSECOND for
// stages, statements and transactions (each resolved to the timer that
// serves it on this platform).
func DefaultTimer(c EventClass) Timer {
	switch c {
	case ClassWait:
		return Cycle.Effective()
	case ClassIdle:
		return Microsecond
	}
	return Nanosecond
}

// SetupTimers holds setup_timers: the timer of each event class. The zero
// value is not ready; use NewSetupTimers.
//
// All methods are safe for concurrent use. Timer is one atomic load, for the
// provider path; a change is seen by the next event that starts, while an
// event already started keeps the timer it started with (the caller records
// it with the event).
type SetupTimers struct {
	timer [NumEventClasses]atomic.Uint32
}

// NewSetupTimers returns setup_timers with every class at its default.
func NewSetupTimers() *SetupTimers {
	s := &SetupTimers{}
	s.Reset()
	return s
}

// Reset sets every class back to its default timer.
func (s *SetupTimers) Reset() {
	for c := range EventClass(NumEventClasses) {
		s.timer[c].Store(uint32(DefaultTimer(c)))
	}
}

// Timer returns the timer of class c. c must be below NumEventClasses.
func (s *SetupTimers) Timer(c EventClass) Timer {
	return Timer(s.timer[c].Load())
}

// SetTimer gives class c timer t, or the next-best timer where t is not
// native, and returns the timer it set. It panics for an out-of-range class
// or timer, which is a programming error; Set validates names from users.
func (s *SetupTimers) SetTimer(c EventClass, t Timer) Timer {
	if c >= NumEventClasses || t >= NumTimers {
		panic(fmt.Sprintf("pfs: BUG: SetTimer(%d, %d) out of range", c, t))
	}
	t = t.Effective()
	s.timer[c].Store(uint32(t))
	return t
}

// Set is UPDATE setup_timers SET TIMER_NAME=timer WHERE NAME=class. Names
// are case-insensitive. An unknown class or timer is an error
// (ErrUnknownEventClass, ErrUnknownTimer) and changes nothing; a timer this
// platform does not have is replaced by the next-best one, which Set
// returns.
func (s *SetupTimers) Set(class, timer string) (Timer, error) {
	c, err := ParseEventClass(class)
	if err != nil {
		return 0, err
	}
	t, err := ParseTimer(timer)
	if err != nil {
		return 0, err
	}
	return s.SetTimer(c, t), nil
}

// SetupTimersRow is one row of setup_timers.
type SetupTimersRow struct {
	Name      EventClass // NAME
	TimerName Timer      // TIMER_NAME
}

// Rows returns setup_timers, one row per class in NAME order.
func (s *SetupTimers) Rows() []SetupTimersRow {
	rows := make([]SetupTimersRow, NumEventClasses)
	for c := range EventClass(NumEventClasses) {
		rows[c] = SetupTimersRow{Name: c, TimerName: s.Timer(c)}
	}
	return rows
}
