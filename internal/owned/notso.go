//go:build !amd64

package owned

// storesOrdered is false where stores may become visible out of order: Seq
// then uses atomic read-modify-writes.
const storesOrdered = false
