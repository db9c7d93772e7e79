//go:build e2e

package e2e

import (
	"os"
	"strings"
)

// loadAverage is the machine's 1, 5 and 15 minute load averages as the
// kernel reports them, for a benchmark's line: a ratio measured on a busy
// machine says so.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
