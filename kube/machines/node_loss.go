package machines

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// DefaultLostNodeGrace is how long a Kubernetes node must have been not
// Ready before the operator force-deletes a Gluster pod stuck terminating
// on it (see states.LostPod). It adds to Kubernetes' own delays: the node
// lifecycle controller's grace before it marks the node unreachable, the
// pod's toleration of that taint, and the pod's termination grace period.
const DefaultLostNodeGrace = time.Minute

// lostPodSide fills snap.LostPod for an Offline node whose peer GD2 just
// reported not alive: the pod from the lister (a deletion timestamp, once
// set, never goes away), the Kubernetes node and the storage read live.
// A read that fails leaves the facts that would allow an eviction unset.
func (s *NodeSyncer) lostPodSide(ctx context.Context, node *operatorv1alpha1.GlusterNode, snap *states.NodeSnapshot) {
	if s.Live == nil || node.Spec.ExternalAddress != "" {
		return
	}
	pod, err := s.Pods.Pods(node.Namespace).Get(objects.NodePodName(node.Name))
	if err != nil || pod.DeletionTimestamp == nil || pod.Spec.NodeName == "" {
		return
	}
	lp := &snap.LostPod
	lp.Terminating, lp.UID, lp.KubeNode, lp.Grace = true, string(pod.UID), pod.Spec.NodeName, cmp.Or(s.LostNodeGrace, DefaultLostNodeGrace)
	lp.DeleteDeadline = pod.DeletionTimestamp.Time
	kn, err := s.Live.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		lp.NodeLost = true
	case err != nil:
		s.log(node).Debug("reading the pod's Kubernetes node failed", zap.Error(err))
		return
	default:
		for _, c := range kn.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				lp.NodeLost, lp.NodeLostSince = true, c.LastTransitionTime.Time
			}
		}
	}
	if !lp.NodeLost {
		return
	}
	note, err := s.podStorageNote(ctx, pod)
	if err != nil {
		s.log(node).Debug("reading the pod's storage failed", zap.Error(err))
		return
	}
	lp.StorageChecked, lp.StorageMovable, lp.StorageNote = true, note == "", note
}

// podStorageNote returns "" when every volume of pod can follow it to
// another node, else a phrase naming the first one that cannot. Claims and
// PVs are read live: a binding seen in a cache is not evidence enough for
// a forced delete.
func (s *NodeSyncer) podStorageNote(ctx context.Context, pod *corev1.Pod) (string, error) {
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.HostPath != nil && objects.HostInterfaceVolume(v.Name):
			continue // the same on every host, and no data of the node's
		case v.HostPath != nil:
			return fmt.Sprintf("volume %q is host path %s", v.Name, v.HostPath.Path), nil
		case v.PersistentVolumeClaim == nil:
			continue
		}
		claim := v.PersistentVolumeClaim.ClaimName
		pvc, err := s.Live.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get PVC %s: %w", claim, err)
		}
		if pvc.Spec.VolumeName == "" {
			return "", fmt.Errorf("PVC %s is not bound", claim)
		}
		pv, err := s.Live.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get PV %s: %w", pvc.Spec.VolumeName, err)
		}
		if why := pvNodeLocal(pv); why != "" {
			return fmt.Sprintf("claim %q is on PV %q, %s", claim, pv.Name, why), nil
		}
	}
	return "", nil
}

// pvNodeLocal says why pv's data cannot be used from another node, or "".
// A local or hostPath volume lives on one machine; a node affinity that
// names hosts pins it there. An affinity on zones or other topology keys
// lets it move within them, and the Gluster pod is pinned to its zone
// anyway.
func pvNodeLocal(pv *corev1.PersistentVolume) string {
	switch {
	case pv.Spec.Local != nil:
		return "a local volume"
	case pv.Spec.HostPath != nil:
		return "a host path"
	}
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	for _, t := range terms {
		pinned := false
		for _, r := range t.MatchExpressions {
			if r.Key == objects.HostnameLabel && r.Operator == corev1.NodeSelectorOpIn {
				pinned = true
			}
		}
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn {
				pinned = true
			}
		}
		if !pinned {
			return ""
		}
	}
	if len(terms) == 0 {
		return ""
	}
	return "whose node affinity names its host"
}
