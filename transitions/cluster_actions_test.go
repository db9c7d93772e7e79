package transitions

import (
	"context"
	"testing"

	"github.com/gluster/anthill/states"
)

func TestClusterUpgradeAndHealActionsAreIdempotent(t *testing.T) {
	c := ClusterTarget{Namespace: "storage", Name: "gluster", DesiredNodes: 3, TargetVersion: "11.1", Options: map[string]string{"cluster.brick-multiplex": "on"}}
	type run func(w *world) error
	var runs = map[string]run{}
	for e, a := range every(ClusterActions) {
		runs["cluster/"+e] = func(w *world) error { return a(context.Background(), w.ops(), c) }
	}
	for e, a := range every(UpgradeActions) {
		runs["upgrade/"+e] = func(w *world) error { return a(context.Background(), w.ops(), c) }
	}
	for e, a := range every(HealActions) {
		runs["heal/"+e] = func(w *world) error {
			return a(context.Background(), w.ops(), VolumeTarget{Cluster: "gluster", Volume: "vol1"})
		}
	}
	for name, r := range runs {
		t.Run(name, func(t *testing.T) {
			w := newWorld()
			if err := r(w); err != nil {
				t.Fatalf("first run: %v", err)
			}
			after := w.snapshot()
			if err := r(w); err != nil {
				t.Fatalf("second run: %v", err)
			}
			if w.snapshot() != after {
				t.Errorf("second run changed the world:\n%s\n%s", after, w.snapshot())
			}
		})
	}
}

func TestUpgradeStepsRefuseIncompleteTargets(t *testing.T) {
	roll, _ := UpgradeActions.Step(states.UpgradeRollClients)
	if err := roll(context.Background(), newWorld().ops(), ClusterTarget{Name: "g"}); err == nil {
		t.Error("rollClients without a version should fail")
	}
}
