package transitions

import (
	"slices"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// Registered returns, per machine name, the events and steps that have an
// action, sorted. It exists so that tests and docs can check the registry
// against the definitions.
func Registered() map[string][]fsm.Event {
	out := map[string][]fsm.Event{}
	add := func(machine string, keys []fsm.Event) {
		slices.Sort(keys)
		out[machine] = keys
	}
	add(states.NodeMachine, keysOf(nodeActions))
	add(states.HealMachine, keysOf(healActions))
	add(states.ClusterMachine, keysOf(clusterActions))
	add(states.UpgradeMachine, keysOf(upgradeActions))
	add(states.DisruptionMachine, keysOf(disruptionActions))
	return out
}

func keysOf[V any](m map[fsm.Event]V) []fsm.Event {
	out := make([]fsm.Event, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
