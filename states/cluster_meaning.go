package states

import "github.com/gluster/anthill/fsm"

// ClusterStateMeaning is what one cluster phase means outside its machine.
type ClusterStateMeaning struct {
	// Condition is the phase condition the phase sets True.
	Condition PhaseCondition
	// HasServers: the cluster has Gluster servers to guard against
	// voluntary evictions (the disruption machine runs): not before it is
	// provisioned, nor once it is being deleted (the cluster machine
	// removes the budgets then).
	HasServers bool
}

// clusterMeanings holds one entry per state of ClusterDefinition: the
// steady phases say how the cluster is, every activity phase that it is
// on its way, and a deleted cluster says nothing.
var clusterMeanings = map[fsm.State]ClusterStateMeaning{
	ClusterPending:       {Condition: PhaseProgressing},
	ClusterProvisioning:  {Condition: PhaseProgressing, HasServers: true},
	ClusterReady:         {Condition: PhaseReady, HasServers: true},
	ClusterDegraded:      {Condition: PhaseDegraded, HasServers: true},
	ClusterScaling:       {Condition: PhaseProgressing, HasServers: true},
	ClusterUpgrading:     {Condition: PhaseProgressing, HasServers: true},
	ClusterReconfiguring: {Condition: PhaseProgressing, HasServers: true},
	ClusterDeleting:      {Condition: PhaseProgressing},
	ClusterDeleted:       {Condition: PhaseNone},
}

// ClusterMeaning returns what cluster phase s means. The empty phase is
// Pending; a phase the definition does not know shows as Progressing, and
// has servers (nothing says it has none).
func ClusterMeaning(s fsm.State) ClusterStateMeaning {
	return meaningOf(clusterMeanings, ClusterPending, s, ClusterStateMeaning{Condition: PhaseProgressing, HasServers: true})
}
