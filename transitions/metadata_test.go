package transitions

import (
	"strings"
	"testing"
)

func TestMetadataFitsCountsOnlyUserKeysAndTheMergedResult(t *testing.T) {
	big := strings.Repeat("v", MetadataLimit-len("admin")-len(MetaHealState)-len("Healthy"))
	tests := []struct {
		name         string
		current, add map[string]string
		want         bool
	}{
		{"an empty volume takes the mirror", nil, map[string]string{MetaHealState: "Healthy"}, true},
		{"exactly the limit fits", map[string]string{"admin": big}, map[string]string{MetaHealState: "Healthy"}, true},
		{"one byte over does not", map[string]string{"admin": big + "v"}, map[string]string{MetaHealState: "Healthy"}, false},
		{"a replaced value is counted once", map[string]string{"admin": big, MetaHealState: "HealPending"}, map[string]string{MetaHealState: "Healthy"}, true},
		{"reserved keys are not counted", map[string]string{"_zone": strings.Repeat("z", 5000)}, map[string]string{MetaHealState: "Healthy"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MetadataFits(tt.current, tt.add); got != tt.want {
				t.Errorf("MetadataFits = %v, want %v", got, tt.want)
			}
		})
	}
}
