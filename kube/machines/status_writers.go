package machines

import (
	"context"
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
)

// onCluster is what every spec of a machine persisted in a GlusterCluster's
// status shares: its runner, built on the first sync, and where the
// cluster's conditions are.
type onCluster[F any] struct {
	once   sync.Once
	runner *engine.Runner[*operatorv1alpha1.GlusterCluster, F]
}

// sync runs spec's sync of key, on a runner whose writer writes the slice
// of the status that slice returns.
func (o *onCluster[F]) sync(ctx context.Context, key engine.Key, spec engine.Spec[*operatorv1alpha1.GlusterCluster, F], a versioned.Interface, log *engine.TransitionLog, clk clock.Clock, slice func(*operatorv1alpha1.GlusterClusterStatus) any) (engine.Result, error) {
	o.once.Do(func() { o.runner = clusterRunner(spec, a, log, clk, slice) })
	return o.runner.Sync(ctx, key)
}

// Conditions are the cluster's conditions.
func (o *onCluster[F]) Conditions(c *operatorv1alpha1.GlusterCluster) *[]metav1.Condition {
	return &c.Status.Conditions
}

// clusterRunner is the runner of a machine persisted in a GlusterCluster's
// status (cluster, upgrade, disruption, heal): its writer writes the
// status when the machine's slice of it changed.
func clusterRunner[F any](spec engine.Spec[*operatorv1alpha1.GlusterCluster, F], a versioned.Interface, log *engine.TransitionLog, clk clock.Clock, slice func(*operatorv1alpha1.GlusterClusterStatus) any) *engine.Runner[*operatorv1alpha1.GlusterCluster, F] {
	return &engine.Runner[*operatorv1alpha1.GlusterCluster, F]{
		Spec: spec, Log: log, Clock: clk, Refusal: effects.RefusalReason,
		Writer: clusterStatusWriter(a, slice),
	}
}

// The status writers below are the only code that writes a status. Every
// machine's runner owns one, for its slice of the status (see
// engine.StatusWriter).

// nodeStatusWriter writes a GlusterNode's status, which is the node
// machine's alone.
func nodeStatusWriter(a versioned.Interface) *engine.StatusWriter[*operatorv1alpha1.GlusterNode] {
	return &engine.StatusWriter[*operatorv1alpha1.GlusterNode]{
		Update: func(ctx context.Context, n *operatorv1alpha1.GlusterNode) (*operatorv1alpha1.GlusterNode, error) {
			n.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel
			return a.OperatorV1alpha1().GlusterNodes(n.Namespace).UpdateStatus(ctx, n, metav1.UpdateOptions{})
		},
		Slice: func(n *operatorv1alpha1.GlusterNode) any { return &n.Status },
	}
}

// clusterStatusWriter writes a GlusterCluster's status when the slice of
// it one machine owns changed.
func clusterStatusWriter(a versioned.Interface, slice func(*operatorv1alpha1.GlusterClusterStatus) any) *engine.StatusWriter[*operatorv1alpha1.GlusterCluster] {
	return &engine.StatusWriter[*operatorv1alpha1.GlusterCluster]{
		Update: func(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (*operatorv1alpha1.GlusterCluster, error) {
			c.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel
			return a.OperatorV1alpha1().GlusterClusters(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		},
		Slice: func(c *operatorv1alpha1.GlusterCluster) any { return slice(&c.Status) },
	}
}

// appendLedger adds entries to the status.ledger of the GlusterCluster
// ns/cluster, skipping those the ledger already holds (withLedgerEntries)
// and dropping the oldest beyond MaxLedger. It is the one write of the
// ledger, and not any machine's slice: it reads the cluster live and
// retries on a conflict, so it neither loses a machine's write nor is
// lost to one. It returns the cluster as written, nil when the ledger
// already held every entry.
func appendLedger(ctx context.Context, a versioned.Interface, ns, cluster string, entries []operatorv1alpha1.LedgerEntry) (*operatorv1alpha1.GlusterCluster, error) {
	var written *operatorv1alpha1.GlusterCluster
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := a.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		next, changed := withLedgerEntries(c.Status.Ledger, entries)
		if !changed {
			return nil
		}
		if c.Status.StatusSchema > operatorv1alpha1.StatusSchemaLevel {
			return fmt.Errorf("GlusterCluster %s/%s: status.statusSchema %d is above this operator's %d; not writing it", ns, cluster, c.Status.StatusSchema, operatorv1alpha1.StatusSchemaLevel)
		}
		c.Status.Ledger, c.Status.StatusSchema = next, operatorv1alpha1.StatusSchemaLevel
		written, err = a.OperatorV1alpha1().GlusterClusters(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		return err
	})
	return written, err
}

// withLedgerEntries is ledger with the entries it lacks appended, bounded.
// Entries of a node are each checked on their own (ledgerHas); the
// cluster-wide ones (no node) of one write are one change, recorded when
// the ledger's latest cluster-wide entries are already they
// (ledgerHasClusterChange).
func withLedgerEntries(ledger, entries []operatorv1alpha1.LedgerEntry) ([]operatorv1alpha1.LedgerEntry, bool) {
	out, changed := ledger, false
	var clusterWide []operatorv1alpha1.LedgerEntry
	for _, e := range entries {
		if e.Node == "" {
			clusterWide = append(clusterWide, e)
		}
	}
	if ledgerHasClusterChange(ledger, clusterWide) {
		clusterWide = nil
	}
	for _, e := range entries {
		switch {
		case e.Node == "" && clusterWide == nil:
			continue
		case e.Node != "" && ledgerHas(out, e):
			continue
		}
		out, changed = append(append([]operatorv1alpha1.LedgerEntry(nil), out...), e), true
	}
	if over := len(out) - operatorv1alpha1.MaxLedger; over > 0 {
		out = append([]operatorv1alpha1.LedgerEntry(nil), out[over:]...)
	}
	return out, changed
}

// ledgerHas reports whether ledger records the change e of a node
// records. A brick move happens once (the brick is gone from the node
// after it), so any entry of the same action, node, volume and brick is
// it. Other changes recur (a node drained twice, upgraded twice): e is
// recorded when the node's latest entry is the same change (action,
// version, template).
func ledgerHas(ledger []operatorv1alpha1.LedgerEntry, e operatorv1alpha1.LedgerEntry) bool {
	if e.Action == operatorv1alpha1.LedgerActionReplaceBrick {
		for _, have := range ledger {
			if have.Action == e.Action && have.Node == e.Node && have.Volume == e.Volume && have.Brick == e.Brick {
				return true
			}
		}
		return false
	}
	for i := len(ledger) - 1; i >= 0; i-- {
		if have := ledger[i]; have.Node == e.Node {
			return sameChange(have, e)
		}
	}
	return false
}

// ledgerHasClusterChange reports whether ledger records the cluster-wide
// change that entries (written together) record: its latest cluster-wide
// entries are the same changes, in order. A step repeated until the
// change shows in the cache, or an action retried after it failed, is
// then one record; the same change made again right after (with only
// node entries between) is taken for its retry. No entries: recorded.
func ledgerHasClusterChange(ledger, entries []operatorv1alpha1.LedgerEntry) bool {
	i := len(entries) - 1
	for j := len(ledger) - 1; j >= 0 && i >= 0; j-- {
		if ledger[j].Node != "" {
			continue
		}
		if !sameChange(ledger[j], entries[i]) {
			return false
		}
		i--
	}
	return i < 0
}

// sameChange: a and b record the same change, whenever made. The volume
// tells apart the bricks of two volumes started on one node.
func sameChange(a, b operatorv1alpha1.LedgerEntry) bool {
	return a.Action == b.Action && a.Node == b.Node && a.Volume == b.Volume && a.Version == b.Version && a.Template == b.Template &&
		a.Count == b.Count && slices.Equal(a.Objects, b.Objects) && slices.Equal(a.Options, b.Options)
}
