package heal

import (
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/wake"
)

// The fields the machine's wake-up predicate reads include the status
// slice it owns: a change of its own slice wakes it.
func TestReadsCoverOwns(t *testing.T) {
	var st operatorv1alpha1.GlusterClusterStatus
	reads := map[any]bool{}
	for _, f := range wake.HealReads(&st) {
		reads[f] = true
	}
	for _, f := range healFields(&st) {
		if !reads[f] {
			t.Errorf("the machine owns %T but its wake-up predicate does not read it", f)
		}
	}
}
