package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// executable writes an empty executable file called name into dir.
func executable(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFindAnthillPrefersTheFlagThenItsNeighbourThenPATH(t *testing.T) {
	bin, elsewhere, onPath := t.TempDir(), t.TempDir(), t.TempDir()
	self := executable(t, bin, "anthill-dev")
	neighbour := executable(t, bin, "anthill")
	flagged := executable(t, elsewhere, "my-anthill")
	inPath := executable(t, onPath, "anthill")
	t.Setenv("PATH", onPath)

	tests := []struct {
		name, flag, self, want string
	}{
		{"the flag wins", flagged, self, flagged},
		{"else the anthill next to anthill-dev", "", self, neighbour},
		{"else the one on PATH", "", filepath.Join(elsewhere, "anthill-dev"), inPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findAnthill(tt.flag, tt.self)
			if err != nil || got != tt.want {
				t.Errorf("findAnthill(%q, %q) = %q, %v; want %q", tt.flag, tt.self, got, err, tt.want)
			}
		})
	}
}

func TestFindAnthillSaysHowToGetOne(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := findAnthill("", filepath.Join(t.TempDir(), "anthill-dev"))
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("findAnthill without any anthill = %v, want an error naming make build", err)
	}
}
