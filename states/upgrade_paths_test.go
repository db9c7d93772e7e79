package states

import (
	"testing"
)

func TestCheckUpgradePath(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		ok       bool
	}{
		{name: "the same version needs no path", from: "10.4", to: "10.4", ok: true},
		{name: "a patch update within a major is allowed", from: "10.4.1", to: "10.4.3", ok: true},
		{name: "a minor update within a major is allowed", from: "9.2", to: "9.6", ok: true},
		{name: "nine to ten is one major step", from: "9.6", to: "10.1", ok: true},
		{name: "ten to eleven is one major step", from: "v10.4", to: "v11.0", ok: true},
		{name: "nine to eleven skips a major", from: "9.6", to: "11.1", ok: false},
		{name: "eleven to ten is a downgrade", from: "11.1", to: "10.4", ok: false},
		{name: "a patch downgrade is refused", from: "10.4.2", to: "10.4.1", ok: false},
		{name: "an unqualified major is refused", from: "11.1", to: "12.0", ok: false},
		{name: "an unparsable target is refused", from: "10.4", to: "latest", ok: false},
		{name: "an unparsable source is refused", from: "10.4-rc1", to: "10.5", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckUpgradePath(tt.from, tt.to)
			if (err == nil) != tt.ok {
				t.Errorf("CheckUpgradePath(%q, %q) = %v, want ok=%v", tt.from, tt.to, err, tt.ok)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want Version
		ok   bool
	}{
		{"10", Version{10, 0, 0}, true},
		{"10.4", Version{10, 4, 0}, true},
		{"v11.1.2", Version{11, 1, 2}, true},
		{"", Version{}, false},
		{"1.2.3.4", Version{}, false},
		{"10.+4", Version{}, false},
		{"10..4", Version{}, false},
		{"ten", Version{}, false},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestUpgradePathsStepOneMajorAtATimeForwards(t *testing.T) {
	for _, p := range UpgradePaths {
		if p.To != p.From && p.To != p.From+1 {
			t.Errorf("path %d → %d skips or reverses a major", p.From, p.To)
		}
		if p.Note == "" {
			t.Errorf("path %d → %d has no note", p.From, p.To)
		}
	}
}
