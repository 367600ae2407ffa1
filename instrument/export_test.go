package instrument

// RowsWhere is rowsWhere (sync_test.go), for the tests of package
// instrument_test.
var RowsWhere = rowsWhere
