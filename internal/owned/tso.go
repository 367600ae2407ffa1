//go:build amd64 || 386

package owned

// storesOrdered reports that the hardware makes stores visible to other
// cores in program order (x86's total store order).
const storesOrdered = true
