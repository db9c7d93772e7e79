package operator

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// The files a container's memory limit is read from: cgroup v2's, then
// cgroup v1's.
var cgroupMemoryLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// softLimitShare is the share of the container's memory limit the Go
// runtime is asked to stay under: the garbage collector runs harder as the
// heap nears it, instead of letting the heap reach twice its live size
// (GOGC's default) and the container be killed at its limit. The rest is
// room for what the runtime does not count (thread stacks outside Go, the
// binary's mapped pages).
const softLimitShare = 0.9

// softMemoryLimit is the soft memory limit to give the Go runtime:
// softLimitShare of the first cgroup memory limit read finds, or 0 when
// GOMEMLIMIT is set (the admin's choice stands) or there is no limit (none
// set, "max", v1's page-rounded "unlimited", or no file).
func softMemoryLimit(getenv func(string) string, read func(string) ([]byte, error)) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	for _, f := range cgroupMemoryLimitFiles {
		raw, err := read(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(raw))
		if v == "max" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0
		}
		return int64(float64(n) * softLimitShare)
	}
	return 0
}

// setSoftMemoryLimit applies softMemoryLimit to the running process.
func setSoftMemoryLimit(log *zap.Logger) {
	if limit := softMemoryLimit(os.Getenv, os.ReadFile); limit > 0 {
		debug.SetMemoryLimit(limit)
		log.Info("Go soft memory limit set from the container's memory limit", zap.Int64("bytes", limit))
	}
}
