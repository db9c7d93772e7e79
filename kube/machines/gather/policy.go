package gather

import (
	"time"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// DefaultPermissibleDowntime applies when a cluster sets no failure policy:
// long enough to ride out a node reboot or a kernel upgrade, short enough
// that a dead node's replica sets do not run degraded for a whole shift.
const DefaultPermissibleDowntime = 30 * time.Minute

// DefaultOfflineGrace and DefaultRecoveryWindow are the liveness
// hysteresis windows (see states.LivenessClocks) when a cluster sets none.
// GD2 itself reports a peer dead only after its 30-second session lapses,
// so another 30 s rides out a GD2 restart; two minutes alive tells a peer
// that is back from one that flaps.
const (
	DefaultOfflineGrace   = 30 * time.Second
	DefaultRecoveryWindow = 2 * time.Minute
)

// GD2LivenessLease is how long a killed GD2 still shows online to its
// peers: its liveness key lives on an etcd session whose lease (30 s) must
// lapse first; a clean stop revokes it at once. The liveness windows above
// are measured from what anthill sees, so a crash reaches a decision up to
// this much (plus one peer-list interval) later than it happened; see
// docs/design/machines-and-dispatch.md.
const GD2LivenessLease = 30 * time.Second

// FailureWindows is cluster's failure policy: its permissible downtime,
// offline grace and recovery window, each at its default when unset.
func FailureWindows(cluster *operatorv1alpha1.GlusterCluster) (downtime, grace, recovery time.Duration) {
	downtime, grace, recovery = DefaultPermissibleDowntime, DefaultOfflineGrace, DefaultRecoveryWindow
	if fp := cluster.Spec.FailurePolicy; fp != nil {
		if fp.PermissibleDowntime != nil {
			downtime = fp.PermissibleDowntime.Duration
		}
		if fp.OfflineGrace != nil {
			grace = fp.OfflineGrace.Duration
		}
		if fp.RecoveryWindow != nil {
			recovery = fp.RecoveryWindow.Duration
		}
	}
	return downtime, grace, recovery
}
