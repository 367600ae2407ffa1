package bridge

// WithHistoryClock sets the clock a History gives untimed events, for tests.
var WithHistoryClock = withHistoryClock
