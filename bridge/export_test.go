package bridge

// WithClock sets the producer's clock, for tests.
var WithClock = withClock
