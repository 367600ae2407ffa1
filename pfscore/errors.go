package pfscore

// CountInstrumentError counts one instrument that its provider asked for but
// could not register: a bad name, a name of the wrong kind for the
// constructor, or a full class table. The instrument still works,
// uninstrumented; the count is global_status's
// Performance_schema_instrument_errors. That variable is not MySQL's: MySQL
// instruments are compiled in and cannot be misspelled at run time, whereas a
// Go service names its own. It counts every failure, even those the
// provider's error handler stops logging, so a service that builds a badly
// named mutex per request shows a growing counter rather than a flood of log
// lines. Package instrument calls it; other providers may too. Safe for
// concurrent use.
func (s *Schema) CountInstrumentError() { s.instrumentErrors.Add(1) }
