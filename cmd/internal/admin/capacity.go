package admin

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// binaryUnits are the suffixes humanBytes uses, each 1024 times the last.
var binaryUnits = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}

// humanBytes renders a byte quantity in the largest binary unit it fills,
// with at most one decimal ("509.6Gi", "600Gi"), so that what GD2 reports
// in bytes and what a spec says in Gi read alike side by side. A nil
// quantity is "?".
func humanBytes(q *resource.Quantity) string {
	if q == nil {
		return "?"
	}
	v := q.AsApproximateFloat64()
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	unit := 0
	for v >= 1024 && unit < len(binaryUnits)-1 {
		v /= 1024
		unit++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	// A whole number reads without its ".0"; rounding up to 1024.0 stays
	// as it is rather than change unit.
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return sign + s + binaryUnits[unit]
}
