package pfscore

import "github.com/otelpfs/otelpfs/hwclock"

// The setup tables and the timer tables.

// setupTimersRow is a row of setup_timers.
type setupTimersRow struct {
	Name      hwclock.EventClass `pfs:"NAME,dim"`
	TimerName hwclock.Timer      `pfs:"TIMER_NAME,attr"`
}

// performanceTimersRow is a row of performance_timers.
type performanceTimersRow struct {
	TimerName       hwclock.Timer `pfs:"TIMER_NAME,dim"`
	TimerFrequency  uint64        `pfs:"TIMER_FREQUENCY,attr"`
	TimerResolution uint64        `pfs:"TIMER_RESOLUTION,attr"`
	TimerOverhead   uint64        `pfs:"TIMER_OVERHEAD,attr"`
}

func init() {
	defineRows("setup_instruments", (*Schema).SetupInstruments, nil)
	defineRows("setup_consumers", (*Schema).SetupConsumers, nil)
	defineRows("setup_actors", (*Schema).SetupActors, (*Schema).TruncateSetupActors)
	defineRows("setup_objects", (*Schema).SetupObjects, (*Schema).TruncateSetupObjects)
	defineRows("setup_threads", (*Schema).SetupThreads, nil)
	defineRows("setup_timers", func(s *Schema) []setupTimersRow {
		var rows []setupTimersRow
		for _, r := range s.timers.Rows() {
			rows = append(rows, setupTimersRow{r.Name, r.TimerName})
		}
		return rows
	}, nil)
	defineRows("performance_timers", func(*Schema) []performanceTimersRow {
		var rows []performanceTimersRow
		for _, r := range hwclock.PerformanceTimers() {
			rows = append(rows, performanceTimersRow{r.Name, r.Frequency, r.Resolution, r.Overhead})
		}
		return rows
	}, nil)
}
