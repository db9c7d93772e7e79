package disruption

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/wake"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func disruptionKey(namespace, cluster string) engine.Key {
	return engine.Key{Machine: states.DisruptionMachine, Namespace: namespace, Name: cluster}
}

// DisruptionKeys maps the objects the disruption machine watches to its
// key: GlusterClusters, GlusterNodes, and the Gluster pods and budgets
// anthill labels with their cluster.
func DisruptionKeys(obj any) []engine.Key {
	switch o := obj.(type) {
	case *operatorv1alpha1.GlusterCluster:
		return []engine.Key{disruptionKey(o.Namespace, o.Name)}
	case *operatorv1alpha1.GlusterNode:
		return []engine.Key{disruptionKey(o.Namespace, o.Spec.Cluster)}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	l := m.GetLabels()
	if c := l[objects.LabelCluster]; c != "" && l[objects.LabelComponent] == objects.ComponentGlusterNode {
		return []engine.Key{disruptionKey(m.GetNamespace(), c)}
	}
	return nil
}

// UpdateKeys is DisruptionKeys for informer deliveries: a GlusterNode
// update that changed only the node's message and conditions
// (wake.OnlyNodeMessage), and a GlusterCluster update that changed none
// of what the machine reads (wake.ClusterChangeConcernsDisruption), do
// not concern the disruption machine.
func UpdateKeys(oldObj, newObj any) []engine.Key {
	if oldObj != nil {
		if _, ok := newObj.(*operatorv1alpha1.GlusterCluster); ok && !wake.ClusterChangeConcernsDisruption(oldObj, newObj) {
			return nil
		}
	}
	if wake.OnlyNodeMessage(oldObj, newObj) {
		return nil
	}
	return DisruptionKeys(newObj)
}

// NodeDrainKeys maps a Kubernetes Node to the disruption keys of the
// clusters with a Gluster pod on it: cordoning or tainting it may ask for
// its zone to open.
func NodeDrainKeys(pods corev1listers.PodLister) func(obj any) []engine.Key {
	sel := labels.SelectorFromSet(labels.Set{objects.LabelComponent: objects.ComponentGlusterNode})
	return func(obj any) []engine.Key {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return nil
		}
		ps, _ := pods.List(sel)
		var keys []engine.Key
		for _, p := range ps {
			if k := disruptionKey(p.Namespace, p.Labels[objects.LabelCluster]); p.Spec.NodeName == n.Name && k.Name != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		return keys
	}
}

// SchedulingChanged: only cordons and taints matter to the disruption
// machine, not the status heartbeats Nodes send all the time.
func SchedulingChanged(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*corev1.Node)
	n, ok2 := newObj.(*corev1.Node)
	if !ok1 || !ok2 {
		return true
	}
	return o.Spec.Unschedulable != n.Spec.Unschedulable || !equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints)
}
