package states

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Gluster release version, MAJOR[.MINOR[.PATCH]], with an
// optional leading "v". Gluster numbers releases by major (9, 10, 11) with
// minor updates inside a major; there are no pre-release tags in what we run.
type Version struct {
	Major, Minor, Patch int
}

// ParseVersion parses "10", "10.4", "v11.1.2". Anything else is an error, so
// an unparsable target blocks an upgrade instead of being guessed at.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if t == "" || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q: want MAJOR[.MINOR[.PATCH]]", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || strings.TrimLeft(p, "0123456789") != "" {
			return Version{}, fmt.Errorf("version %q: part %q is not a number", s, p)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// Compare returns -1, 0 or 1 as v is older than, equal to or newer than o.
func (v Version) Compare(o Version) int {
	for _, d := range [3]int{v.Major - o.Major, v.Minor - o.Minor, v.Patch - o.Patch} {
		switch {
		case d < 0:
			return -1
		case d > 0:
			return 1
		}
	}
	return 0
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }
