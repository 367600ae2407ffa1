//go:build amd64

package owned

// storesOrdered reports that the hardware makes stores visible to other
// cores in program order (x86's total store order). 386 is left out: its
// 64-bit plain stores are two 32-bit stores.
const storesOrdered = true
