// Package hwclock provides otelpfs's timers.
package hwclock
