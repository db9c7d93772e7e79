package node

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
func (s *Syncer) lostPodSide(ctx context.Context, node *operatorv1alpha1.GlusterNode, snap *states.NodeSnapshot) {
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
	vols, err := s.podVolumes(ctx, pod)
	if err != nil {
		s.log(node).Debug("reading the pod's storage failed", zap.Error(err))
	}
	checked, note := states.LostPodStorage(vols)
	lp.StorageChecked, lp.StorageMovable, lp.StorageNote = checked, checked && note == "", note
}

// podVolumes reads the volumes of pod for states.LostPodStorage, in the
// pod's order. Claims and PVs are read live: a binding seen in a cache is
// not evidence enough for a forced delete. A read that fails ends the
// list with that volume unread, and is returned.
func (s *Syncer) podVolumes(ctx context.Context, pod *corev1.Pod) ([]states.PodVolumeFacts, error) {
	var out []states.PodVolumeFacts
	for _, v := range pod.Spec.Volumes {
		f := states.PodVolumeFacts{Name: v.Name}
		switch {
		case v.HostPath != nil:
			f.HostPath, f.Path, f.HostInterface = true, v.HostPath.Path, objects.HostInterfaceVolume(v.Name)
		case v.PersistentVolumeClaim != nil:
			f.Claim = v.PersistentVolumeClaim.ClaimName
		}
		if f.Claim == "" {
			out = append(out, f)
			continue
		}
		pv, err := s.claimVolume(ctx, pod.Namespace, f.Claim)
		if err != nil {
			return append(out, f), err
		}
		f.Read, f.PV = true, pvFacts(pv)
		out = append(out, f)
	}
	return out, nil
}

// claimVolume reads the PV that claim in namespace is bound to, live.
func (s *Syncer) claimVolume(ctx context.Context, namespace, claim string) (*corev1.PersistentVolume, error) {
	pvc, err := s.Live.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get PVC %s: %w", claim, err)
	}
	if pvc.Spec.VolumeName == "" {
		return nil, fmt.Errorf("PVC %s is not bound", claim)
	}
	pv, err := s.Live.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get PV %s: %w", pvc.Spec.VolumeName, err)
	}
	return pv, nil
}

// pvFacts is what states.PVFacts.NodeLocal decides from: whether pv is a
// local or hostPath volume, and for each term of its required node
// affinity whether the term names hosts (the hostname label, or the node's
// metadata.name, with operator In).
func pvFacts(pv *corev1.PersistentVolume) states.PVFacts {
	f := states.PVFacts{Name: pv.Name, Local: pv.Spec.Local != nil, HostPath: pv.Spec.HostPath != nil}
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return f
	}
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		names := false
		for _, r := range t.MatchExpressions {
			if r.Key == objects.HostnameLabel && r.Operator == corev1.NodeSelectorOpIn {
				names = true
			}
		}
		for _, r := range t.MatchFields {
			if r.Key == "metadata.name" && r.Operator == corev1.NodeSelectorOpIn {
				names = true
			}
		}
		f.HostTerms = append(f.HostTerms, names)
	}
	return f
}
