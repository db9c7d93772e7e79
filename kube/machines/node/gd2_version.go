package node

import (
	"context"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// ExternalVersionReadInterval is how often the GD2 version of a server
// anthill runs no pod for (spec.externalAddress) is read again: nothing
// tells anthill when it restarts on another build.
const ExternalVersionReadInterval = time.Hour

// gd2Version is what a sync learned of the node's own GD2 version.
type gd2Version struct {
	// pod is the UID of the node's ready pod ("" for a node anthill runs
	// no pod for, and while its pod is not ready).
	pod string
	// external: anthill runs no pod for the node.
	external bool
	// read is a new reading of GET /version, nil when none was due or it
	// failed.
	read *operatorv1alpha1.GD2VersionStatus
}

// readGD2Version reads GET /version from the node's own GD2 (not the
// management Service: each server reports its own build) when it is due:
// once per ready pod, and every ExternalVersionReadInterval for a node
// anthill runs no pod for. A failed read is logged and tried again next
// sync; the last reading stays.
func (s *Syncer) readGD2Version(ctx context.Context, node *operatorv1alpha1.GlusterNode, cluster *operatorv1alpha1.GlusterCluster, now time.Time) gd2Version {
	v := gd2Version{external: node.Spec.ExternalAddress != ""}
	if !v.external {
		pod, err := s.Pods.Pods(node.Namespace).Get(objects.NodePodName(node.Name))
		if err != nil || pod.DeletionTimestamp != nil || !objects.PodReady(pod) {
			if err != nil && !apierrors.IsNotFound(err) {
				s.log(node).Debug("pod not readable for the GD2 version", zap.Error(err))
			}
			return v
		}
		v.pod = string(pod.UID)
	}
	if !versionReadDue(node.Status.GD2Version, v, now) {
		return v
	}
	gc, err := s.GD2.ForNode(ctx, cluster, node)
	if err != nil {
		s.log(node).Debug("no GD2 client for the node's version", zap.Error(err))
		return v
	}
	info, err := gc.Version(ctx)
	if err != nil {
		s.log(node).Debug("reading the node's GD2 version failed; retrying next sync", zap.Error(err))
		return v
	}
	v.read = &operatorv1alpha1.GD2VersionStatus{Reported: info.GlusterdVersion, Pod: v.pod, ReadTime: metav1.NewTime(now)}
	return v
}

// versionReadDue reports whether the node's GD2 version must be read: never
// while its pod is not ready; for a pod that was not read yet; for a
// node without a pod when the last reading is older than
// ExternalVersionReadInterval.
func versionReadDue(last *operatorv1alpha1.GD2VersionStatus, v gd2Version, now time.Time) bool {
	switch {
	case !v.external && v.pod == "":
		return false
	case last == nil:
		return true
	case v.external:
		return now.Sub(last.ReadTime.Time) >= ExternalVersionReadInterval
	}
	return last.Pod != v.pod
}

// recordGD2Version lands a new reading in the node's status and sets its
// VersionMatches condition (states.DecideVersionMatch) from the reading of
// the pod that runs now and the version anthill records for it. A reading
// of an earlier pod counts as none, so a restarted server is never judged
// by what its last pod ran.
func recordGD2Version(node *operatorv1alpha1.GlusterNode, v gd2Version, now time.Time) {
	st := &node.Status
	if v.read != nil {
		st.GD2Version = v.read
	}
	facts := states.VersionFacts{Recorded: st.Version}
	if r := st.GD2Version; r != nil && (v.external || (v.pod != "" && r.Pod == v.pod)) {
		facts.Read, facts.Reported = true, r.Reported
	}
	verdict := states.DecideVersionMatch(facts)
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: operatorv1alpha1.ConditionVersionMatches, Status: metav1.ConditionStatus(verdict.Status),
		Reason: verdict.Reason, Message: verdict.Message, ObservedGeneration: node.Generation, LastTransitionTime: metav1.NewTime(now),
	})
}
