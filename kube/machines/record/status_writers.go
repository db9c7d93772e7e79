package record

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
)

// OnCluster is what every syncer of a machine persisted in a GlusterCluster's
// status shares: its runner, built on the first sync, and where the
// cluster's conditions are.
type OnCluster[F any] struct {
	once   sync.Once
	runner *engine.Runner[*operatorv1alpha1.GlusterCluster, F]
}

// SyncWith runs m's sync of key, on a runner whose writer writes the slice
// of the status that slice returns.
func (o *OnCluster[F]) SyncWith(ctx context.Context, key engine.Key, m engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, F], a versioned.Interface, log *engine.TransitionLog, clk clock.Clock, slice func(*operatorv1alpha1.GlusterClusterStatus) any) (engine.Result, error) {
	o.once.Do(func() { o.runner = clusterRunner(m, a, log, clk, slice) })
	return o.runner.Sync(ctx, key)
}

// Conditions are the cluster's conditions.
func (o *OnCluster[F]) Conditions(c *operatorv1alpha1.GlusterCluster) *[]metav1.Condition {
	return &c.Status.Conditions
}

// clusterRunner is the runner of a machine persisted in a GlusterCluster's
// status (cluster, upgrade, disruption, heal): its writer writes the
// status when the machine's slice of it changed.
func clusterRunner[F any](m engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, F], a versioned.Interface, log *engine.TransitionLog, clk clock.Clock, slice func(*operatorv1alpha1.GlusterClusterStatus) any) *engine.Runner[*operatorv1alpha1.GlusterCluster, F] {
	return &engine.Runner[*operatorv1alpha1.GlusterCluster, F]{
		Machine: m, Log: log, Clock: clk, Refusal: effects.RefusalReason,
		Writer: clusterStatusWriter(a, slice),
	}
}

// The status writers below are the only code that writes a status. Every
// machine's runner owns one, for its slice of the status (see
// engine.StatusWriter).

// NodeStatusWriter writes a GlusterNode's status, which is the node
// machine's alone.
func NodeStatusWriter(a versioned.Interface) *engine.StatusWriter[*operatorv1alpha1.GlusterNode] {
	return &engine.StatusWriter[*operatorv1alpha1.GlusterNode]{
		Update: func(ctx context.Context, n *operatorv1alpha1.GlusterNode) (*operatorv1alpha1.GlusterNode, error) {
			n.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel
			return a.OperatorV1alpha1().GlusterNodes(n.Namespace).UpdateStatus(ctx, n, metav1.UpdateOptions{})
		},
		Slice: func(n *operatorv1alpha1.GlusterNode) any { return &n.Status },
	}
}

// clusterStatusWriter writes a GlusterCluster's status when the slice of
// it one machine owns changed, or the ledger, where every machine
// persisted in the cluster's status puts its lasting changes on record
// before it makes them (engine.RecordsAhead).
func clusterStatusWriter(a versioned.Interface, slice func(*operatorv1alpha1.GlusterClusterStatus) any) *engine.StatusWriter[*operatorv1alpha1.GlusterCluster] {
	return &engine.StatusWriter[*operatorv1alpha1.GlusterCluster]{
		Update: func(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (*operatorv1alpha1.GlusterCluster, error) {
			c.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel
			return a.OperatorV1alpha1().GlusterClusters(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		},
		Slice: func(c *operatorv1alpha1.GlusterCluster) any { return []any{slice(&c.Status), c.Status.Ledger} },
	}
}
