package machinestatus

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
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

// SyncWith runs m's sync of key, on a runner whose writer writes the
// machine's own fields of the status and its share of what the machines
// share.
func (o *OnCluster[F]) SyncWith(ctx context.Context, key engine.Key, m engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, F], a versioned.Interface, log *engine.TransitionLog, clk clock.Clock, own OwnFields) (engine.Result, error) {
	o.once.Do(func() { o.runner = clusterRunner(m, a, log, clk, own) })
	return o.runner.Sync(ctx, key)
}

// Conditions are the cluster's conditions.
func (o *OnCluster[F]) Conditions(c *operatorv1alpha1.GlusterCluster) *[]metav1.Condition {
	return &c.Status.Conditions
}

// clusterRunner is the runner of a machine persisted in a GlusterCluster's
// status (cluster, upgrade, disruption, heal): its writer writes the
// status when the machine's slice of it changed.
func clusterRunner[F any](m engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, F], a versioned.Interface, log *engine.TransitionLog, clk clock.Clock, own OwnFields) *engine.Runner[*operatorv1alpha1.GlusterCluster, F] {
	r := &engine.Runner[*operatorv1alpha1.GlusterCluster, F]{
		Machine: m, Log: log, Clock: clk, Refusal: effects.RefusalReason,
		Writer: clusterStatusWriter(a, own), Ledger: ClusterLedger{},
	}
	if p, ok := m.(Prompts); ok {
		r.Rounds, r.Prompt = clusterRounds, p.Prompt
	}
	return r
}

// Prompts is implemented by a machine persisted in a GlusterCluster some
// of whose states decide again at once after a transition into them
// (engine.Runner.Prompt).
type Prompts interface {
	Prompt(state fsm.State) bool
}

// clusterRounds bounds the decisions one sync of such a machine takes in
// a row: the upgrade machine's request, validation and first pick.
const clusterRounds = 3

// The status writers below are the only code that writes a status. Every
// machine's runner owns one, for its slice of the status (see
// engine.StatusWriter).

// NodeStatusWriter writes a GlusterNode's status, which is the node
// machine's alone. A write that lost only to a change of the node's spec
// or metadata is made again on the live object.
func NodeStatusWriter(a versioned.Interface) *engine.StatusWriter[*operatorv1alpha1.GlusterNode] {
	return &engine.StatusWriter[*operatorv1alpha1.GlusterNode]{
		Update: func(ctx context.Context, n *operatorv1alpha1.GlusterNode) (*operatorv1alpha1.GlusterNode, error) {
			n.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel
			return a.OperatorV1alpha1().GlusterNodes(n.Namespace).UpdateStatus(ctx, n, metav1.UpdateOptions{})
		},
		Slice: func(n *operatorv1alpha1.GlusterNode) any { return &n.Status },
		Get: func(ctx context.Context, n *operatorv1alpha1.GlusterNode) (*operatorv1alpha1.GlusterNode, error) {
			return a.OperatorV1alpha1().GlusterNodes(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
		},
		Rebase: func(live, before, after *operatorv1alpha1.GlusterNode) bool {
			if !threeWay(live.Status, before.Status, after.Status) {
				return false
			}
			live.Status = after.Status
			return true
		},
		Holds: func(cached, _, _, written *operatorv1alpha1.GlusterNode) bool {
			return equality.Semantic.DeepEqual(cached.Status, written.Status)
		},
	}
}

// clusterStatusWriter writes a GlusterCluster's status when one machine's
// part of it changed: its own fields, or its share of the conditions, the
// history and the ledger, where every machine persisted in the cluster's
// status puts its lasting changes on record before it makes them
// (engine.Ledger). A write that lost to another machine's is made
// again on the live object (rebaseCluster).
func clusterStatusWriter(a versioned.Interface, own OwnFields) *engine.StatusWriter[*operatorv1alpha1.GlusterCluster] {
	return &engine.StatusWriter[*operatorv1alpha1.GlusterCluster]{
		Update: func(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (*operatorv1alpha1.GlusterCluster, error) {
			c.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel
			return a.OperatorV1alpha1().GlusterClusters(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		},
		Slice: clusterSlice(own),
		Get: func(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (*operatorv1alpha1.GlusterCluster, error) {
			return a.OperatorV1alpha1().GlusterClusters(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		},
		Rebase: rebaseCluster(own),
		Holds:  holdsCluster(own),
	}
}
