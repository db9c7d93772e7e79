package transitions

import (
	"reflect"
	"strings"
	"testing"
)

// TestNoActionExpandsAVolumeInPlace: GD2's in-place expand resizes bricks
// through LVM by the create planner's 1-based names, so after any
// replace-brick (0-based names) it grows the wrong brick or fails, and it
// fails on loop bricks. No action may reach it: nothing the actions are
// given from GD2 expands or resizes a volume. (The StorageClasses anthill
// writes also set allowVolumeExpansion false.) A new capability of that
// kind must first check that GD2 would resize the right brick.
func TestNoActionExpandsAVolumeInPlace(t *testing.T) {
	ops := reflect.TypeFor[GD2Ops]()
	for i := range ops.NumMethod() {
		name := strings.ToLower(ops.Method(i).Name)
		if strings.Contains(name, "expand") || strings.Contains(name, "resize") || strings.Contains(name, "grow") {
			t.Errorf("GD2Ops.%s lets an action expand a volume in place", ops.Method(i).Name)
		}
	}
}
