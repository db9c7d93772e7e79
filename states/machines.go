package states

import "github.com/gluster/anthill/fsm"

// Definitions returns every machine's definition, in the order the docs
// list them.
func Definitions() []*fsm.Definition {
	return []*fsm.Definition{NodeDefinition(), HealDefinition(), UpgradeDefinition(), ClusterDefinition(), DisruptionDefinition()}
}

// DefinitionByName returns the definition of the named machine, or nil.
func DefinitionByName(name string) *fsm.Definition {
	for _, d := range Definitions() {
		if d.Machine == name {
			return d
		}
	}
	return nil
}

// MachineNames returns the machine names in Definitions order.
func MachineNames() []string {
	var out []string
	for _, d := range Definitions() {
		out = append(out, d.Machine)
	}
	return out
}
