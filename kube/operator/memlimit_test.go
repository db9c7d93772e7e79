package operator

import (
	"io/fs"
	"testing"
)

func TestSoftMemoryLimitIsNineTenthsOfTheContainersLimit(t *testing.T) {
	v2, v1 := cgroupMemoryLimitFiles[0], cgroupMemoryLimitFiles[1]
	for _, tc := range []struct {
		name  string
		env   string
		files map[string]string
		want  int64
	}{
		{name: "cgroup v2, 512 MiB", files: map[string]string{v2: "536870912\n"}, want: 483183820},
		{name: "cgroup v2 without a limit", files: map[string]string{v2: "max\n", v1: "536870912\n"}, want: 0},
		{name: "cgroup v1, 1 GiB", files: map[string]string{v1: "1073741824\n"}, want: 966367641},
		{name: "cgroup v1 without a limit", files: map[string]string{v1: "9223372036854771712\n"}, want: 0},
		{name: "GOMEMLIMIT set by the admin", env: "400MiB", files: map[string]string{v2: "536870912\n"}, want: 0},
		{name: "no cgroup files (not in a container)", want: 0},
		{name: "unreadable value", files: map[string]string{v2: "lots\n"}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "GOMEMLIMIT" {
					return tc.env
				}
				return ""
			}
			read := func(f string) ([]byte, error) {
				if v, ok := tc.files[f]; ok {
					return []byte(v), nil
				}
				return nil, fs.ErrNotExist
			}
			if got := softMemoryLimit(getenv, read); got != tc.want {
				t.Errorf("softMemoryLimit = %d, want %d", got, tc.want)
			}
		})
	}
}
