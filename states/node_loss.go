package states

import (
	"fmt"
	"slices"
	"time"
)

// LostPod is what the dispatcher learned about a node's pod when the peer is
// down and Kubernetes has given up on the pod's Kubernetes node: the
// evidence the evictLostPod step decides from. The dispatcher fills it only
// in Offline, with the Kubernetes node and the PersistentVolumes read live
// (never from a cache); the zero value means "nothing known", which never
// evicts anything.
//
// Why the step exists: when a Kubernetes node stops reporting, Kubernetes
// taints it and evicts its pods, but a StatefulSet pod evicted from an
// unreachable node stays Terminating until its kubelet confirms it stopped,
// which an unreachable kubelet never does. That wait is how a StatefulSet
// guarantees at most one pod per identity. The operator may end it only
// when a second copy of the node cannot exist in a harmful way: GD2 says
// the peer is not alive, the Kubernetes node has been lost for a grace
// period, the pod's own deletion grace is over, and every claim of the pod
// is on storage that can be attached elsewhere. Node-local storage can
// never move, so for it the operator forces nothing: the pod waits for its
// node, and past permissibleDowntime the node is Failed (an alert: GD2
// cannot move a dead peer's bricks) until it returns.
type LostPod struct {
	// Terminating: the pod has a deletion timestamp (Kubernetes evicted it,
	// or someone deleted it). A pod that is not terminating is never
	// force-deleted: Kubernetes decides when to evict, from the pod's
	// tolerations.
	Terminating bool
	// UID of the terminating pod; the step deletes only this pod.
	UID string
	// DeleteDeadline is the pod's deletion timestamp, the end of its
	// termination grace period: until then a kubelet could still stop it
	// cleanly.
	DeleteDeadline time.Time
	// KubeNode is the Kubernetes node the pod is bound to.
	KubeNode string
	// NodeLost: that node's Ready condition is not True (False or Unknown),
	// or the node no longer exists.
	NodeLost bool
	// NodeLostSince is when the Ready condition left True; zero when unknown
	// (node gone), which counts as lost long enough.
	NodeLostSince time.Time
	// Grace is how long the Kubernetes node must have been lost before the
	// pod is force-deleted.
	Grace time.Duration
	// StorageChecked: every claim of the pod was read and is bound.
	// StorageMovable: none of them is on node-local storage (a local or
	// hostPath volume, or one whose node affinity names a host).
	// StorageNote names the claim that pins the pod when not movable.
	StorageChecked bool
	StorageMovable bool
	StorageNote    string
}

// evictLostPod decides the evictLostPod step of an Offline node: true with
// the step when every condition holds. The caller has already checked that
// GD2 answered and the node has no admin request.
func evictLostPod(s NodeSnapshot) (Decision, bool) {
	lp := s.LostPod
	if !s.PeerKnown || s.PeerAlive || !lp.Terminating || lp.UID == "" || !lp.NodeLost {
		return Decision{}, false
	}
	if !lp.StorageChecked || !lp.StorageMovable {
		return Decision{}, false
	}
	if s.Now.Before(lp.DeleteDeadline) {
		return Decision{}, false
	}
	if !lp.NodeLostSince.IsZero() && s.Now.Sub(lp.NodeLostSince) < lp.Grace {
		return Decision{}, false
	}
	return step(NodeEvictLostPod, ReasonEvictingLostPod, fmt.Sprintf(
		"Kubernetes node %s is lost, GD2 reports the peer not alive and the node's storage can move: "+
			"force-deleting its terminating pod so that the StatefulSet recreates it on another node with the same name and storage.",
		lp.KubeNode), pollShort), true
}

// lostPodWait explains, for an Offline node whose pod is stuck terminating
// on a lost Kubernetes node, why the pod is not moved yet (or ever). It
// never preempts markFailed: it is asked after the downtime check.
func lostPodWait(s NodeSnapshot) (Decision, bool) {
	lp := s.LostPod
	if !s.PeerKnown || s.PeerAlive || !lp.Terminating || !lp.NodeLost {
		return Decision{}, false
	}
	since := s.DownSince
	if since.IsZero() {
		since = s.Now
	}
	failIn := remaining(s.Now, since, s.PermissibleDowntime)
	if lp.StorageChecked && !lp.StorageMovable {
		return wait(ReasonLostPodStorageLocal, fmt.Sprintf(
			"The pod is stuck on lost Kubernetes node %s, but %s, so it cannot run elsewhere; waiting for the node to return, "+
				"raising the Failed alert if it is not back within the permissible downtime (GD2 cannot move a dead peer's bricks elsewhere).",
			lp.KubeNode, lp.StorageNote), failIn), true
	}
	if !lp.StorageChecked {
		return wait(ReasonLostPodGrace, fmt.Sprintf(
			"The pod is stuck on lost Kubernetes node %s; its storage could not be checked yet.", lp.KubeNode), min(failIn, pollShort)), true
	}
	at := lp.DeleteDeadline
	if !lp.NodeLostSince.IsZero() && lp.NodeLostSince.Add(lp.Grace).After(at) {
		at = lp.NodeLostSince.Add(lp.Grace)
	}
	return wait(ReasonLostPodGrace, fmt.Sprintf(
		"The pod is stuck on lost Kubernetes node %s; it will be force-deleted at %s unless the node or the peer returns first.",
		lp.KubeNode, at.UTC().Format(time.RFC3339)), min(failIn, remaining(s.Now, at, 0))), true
}

// PodVolumeFacts is one volume of a lost node's pod as the gatherer read
// it, for LostPodStorage. Exactly one of HostPath and Claim is set, or
// neither for a volume of any other kind (a secret, a config map, an
// empty dir), which holds no data of the node.
type PodVolumeFacts struct {
	Name string
	// HostPath: a hostPath volume, of path Path.
	HostPath bool
	Path     string
	// HostInterface: a host path every host has alike (LVM's run
	// directory, the kernel's modules), which holds no data of the node.
	HostInterface bool
	// Claim is the PersistentVolumeClaim the volume mounts.
	Claim string
	// Read: the claim was read live and is bound, and PV, the volume it is
	// bound to, was read live too. A binding seen in a cache is not
	// evidence enough for a forced delete.
	Read bool
	PV   PVFacts
}

// PVFacts is a PersistentVolume as the lost-pod check reads it.
type PVFacts struct {
	Name string
	// Local, HostPath: a local or a hostPath volume, which lives on one
	// machine.
	Local, HostPath bool
	// HostTerms has one entry per term of the volume's required node
	// affinity: whether the term names hosts (a requirement on the
	// hostname label, or on the node's name, with operator In).
	HostTerms []bool
}

// NodeLocal says why the volume's data cannot be used from another node,
// or "". A local or hostPath volume lives on one machine; a node affinity
// whose every term names hosts pins it there. A term on zones or other
// topology keys lets it move within them, and the Gluster pod is pinned to
// its zone anyway.
func (pv PVFacts) NodeLocal() string {
	switch {
	case pv.Local:
		return "a local volume"
	case pv.HostPath:
		return "a host path"
	case len(pv.HostTerms) == 0 || slices.Contains(pv.HostTerms, false):
		return ""
	}
	return "whose node affinity names its host"
}

// LostPodStorage decides whether a lost pod's storage may follow a forced
// delete of the pod to another node (LostPod.StorageChecked,
// StorageMovable, StorageNote). checked is false when a claim could not be
// read (nothing is then forced); note is "" when every volume can follow
// the pod, else a phrase naming the first, in the pod's order, that cannot:
// a host path that is not one of the host interfaces, or a claim on
// node-local storage (PVFacts.NodeLocal). A volume that could not be read
// after one that pins the pod changes nothing: the pod stays.
func LostPodStorage(volumes []PodVolumeFacts) (checked bool, note string) {
	for _, v := range volumes {
		switch {
		case v.HostPath && v.HostInterface:
			continue // the same on every host, and no data of the node's
		case v.HostPath:
			return true, fmt.Sprintf("volume %q is host path %s", v.Name, v.Path)
		case v.Claim == "":
			continue
		case !v.Read:
			return false, ""
		}
		if why := v.PV.NodeLocal(); why != "" {
			return true, fmt.Sprintf("claim %q is on PV %q, %s", v.Claim, v.PV.Name, why)
		}
	}
	return true, ""
}
