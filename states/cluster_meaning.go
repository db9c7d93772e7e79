package states

import "github.com/gluster/anthill/fsm"

// ClusterStateMeaning is what one cluster phase means outside its machine.
type ClusterStateMeaning struct {
	// Condition is the phase condition the phase sets True.
	Condition PhaseCondition
}

// clusterMeanings holds one entry per state of ClusterDefinition: the
// steady phases say how the cluster is, every activity phase that it is
// on its way, and a deleted cluster says nothing.
var clusterMeanings = map[fsm.State]ClusterStateMeaning{
	ClusterPending:       {Condition: PhaseProgressing},
	ClusterProvisioning:  {Condition: PhaseProgressing},
	ClusterReady:         {Condition: PhaseReady},
	ClusterDegraded:      {Condition: PhaseDegraded},
	ClusterScaling:       {Condition: PhaseProgressing},
	ClusterUpgrading:     {Condition: PhaseProgressing},
	ClusterReconfiguring: {Condition: PhaseProgressing},
	ClusterDeleting:      {Condition: PhaseProgressing},
	ClusterDeleted:       {Condition: PhaseNone},
}

// ClusterMeaning returns what cluster phase s means. The empty phase is
// Pending; a phase the definition does not know shows as Progressing.
func ClusterMeaning(s fsm.State) ClusterStateMeaning {
	return meaningOf(clusterMeanings, ClusterPending, s, ClusterStateMeaning{Condition: PhaseProgressing})
}
