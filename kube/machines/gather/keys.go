package gather

import (
	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func NodeKey(namespace, name string) engine.Key {
	return engine.Key{Machine: states.NodeMachine, Namespace: namespace, Name: name}
}

func ClusterKey(namespace, name string) engine.Key {
	return engine.Key{Machine: states.ClusterMachine, Namespace: namespace, Name: name}
}

func HealKey(namespace, name string) engine.Key {
	return engine.Key{Machine: states.HealMachine, Namespace: namespace, Name: name}
}

func UpgradeKey(namespace, name string) engine.Key {
	return engine.Key{Machine: states.UpgradeMachine, Namespace: namespace, Name: name}
}

// UsesCluster reports whether PersistentVolume pv holds data of cluster c:
// it was provisioned by (or statically bound to) one of c's CSI drivers,
// whose names are unique per cluster, or an admin labelled it with c's
// name for a volume anthill cannot recognise by its driver.
func UsesCluster(pv *corev1.PersistentVolume, c *operatorv1alpha1.GlusterCluster) bool {
	if pv.Spec.CSI != nil && objects.CSIDriverNames(c)[pv.Spec.CSI.Driver] {
		return true
	}
	return pv.Labels[objects.LabelCluster] == c.Name
}
