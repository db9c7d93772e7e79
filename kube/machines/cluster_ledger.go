package machines

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// maxLedgerItems bounds the objects and options of one ledger entry (the
// API's MaxItems).
const maxLedgerItems = 64

// scaleLedgerEntries are the ledger entries of a scaleNodes step about to
// run: one createNodes entry per template that gains nodes, one
// decommissionNode entry per node asked to leave. They come from the plan
// the action itself carries out (objects.ScalePlanOf), over the live cluster
// and its live GlusterNodes and the brick counts the action is given too:
// the action re-reads the objects live as well, so the entries name what
// it is about to do, and a step repeated while the cache lags plans (and
// records) nothing more.
func scaleLedgerEntries(ctx context.Context, a versioned.Interface, ns, name string, bricks objects.BrickCounts, d states.Decision, phase fsm.State, now time.Time) ([]operatorv1alpha1.LedgerEntry, error) {
	c, err := a.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the cluster to plan its scaling: %w", err)
	}
	if objects.IsExternal(c) {
		return nil, nil
	}
	list, err := a.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list GlusterNodes to plan the scaling: %w", err)
	}
	var nodes []*operatorv1alpha1.GlusterNode
	for i := range list.Items {
		if list.Items[i].Spec.Cluster == name {
			nodes = append(nodes, &list.Items[i])
		}
	}
	plan := objects.ScalePlanOf(c, nodes, bricks)
	var out []operatorv1alpha1.LedgerEntry
	at := metav1.Time{Time: now}
	for i, t := range plan.Create {
		if i > 0 && plan.Create[i-1] == t {
			out[len(out)-1].Count++
			continue
		}
		out = append(out, operatorv1alpha1.LedgerEntry{
			Time: at, Action: operatorv1alpha1.LedgerActionCreateNodes, Template: t.Name, Count: 1, State: string(phase), Reason: d.Reason,
		})
	}
	for _, n := range plan.Decommission {
		out = append(out, operatorv1alpha1.LedgerEntry{
			Time: at, Action: operatorv1alpha1.LedgerActionDecommissionNode, Node: n.Name, Peer: n.Status.PeerID,
			Template: n.Spec.Template, State: n.Status.State, Reason: d.Reason,
		})
	}
	return out, nil
}

// driversLedgerEntry is the entry of an ensureDrivers step: the objects
// the snapshot found missing or out of date, which the action creates.
func driversLedgerEntry(missing []string, d states.Decision, phase fsm.State, now time.Time) operatorv1alpha1.LedgerEntry {
	objs := slices.Clone(missing)
	if len(objs) > maxLedgerItems {
		objs = objs[:maxLedgerItems]
	}
	return operatorv1alpha1.LedgerEntry{
		Time: metav1.Time{Time: now}, Action: operatorv1alpha1.LedgerActionEnsureCSIDrivers, Objects: objs, State: string(phase), Reason: d.Reason,
	}
}

// optionsLedgerEntry is the entry of an applyOptions step: the options it
// sets, "key=value", sorted.
func optionsLedgerEntry(options map[string]string, d states.Decision, phase fsm.State, now time.Time) operatorv1alpha1.LedgerEntry {
	var kv []string
	for k, v := range options {
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	if len(kv) > maxLedgerItems {
		kv = kv[:maxLedgerItems]
	}
	return operatorv1alpha1.LedgerEntry{
		Time: metav1.Time{Time: now}, Action: operatorv1alpha1.LedgerActionSetClusterOptions, Options: kv, State: string(phase), Reason: d.Reason,
	}
}

// ledgerClusterChanges records entries, the lasting changes an action of a
// machine persisted in c's status is about to make, in c's ledger before
// the action runs: no crash between the change and its record can lose
// the record. Nothing is written when the cached ledger already records
// them (a step repeated, an action retried after it failed). A failed
// write fails the action, which the next sync retries.
//
// The write changes c's resourceVersion under the runner, whose status
// write would then conflict. When nothing but the ledger changed in
// between, c takes the written version and ledger, so that the runner's
// write goes through (and keeps the entries); otherwise it conflicts and
// the sync is retried, as for any concurrent write.
func ledgerClusterChanges(ctx context.Context, a versioned.Interface, c *operatorv1alpha1.GlusterCluster, entries []operatorv1alpha1.LedgerEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if _, changed := withLedgerEntries(c.Status.Ledger, entries); !changed {
		return nil
	}
	written, err := appendLedger(ctx, a, c.Namespace, c.Name, entries)
	if err != nil {
		return fmt.Errorf("record %s in the ledger: %w", entries[0].Action, err)
	}
	if written != nil && written.Generation == c.Generation && sameStatusButLedger(written.Status, c.Status) {
		c.ResourceVersion = written.ResourceVersion
		c.Status.Ledger, c.Status.StatusSchema = written.Status.Ledger, written.Status.StatusSchema
	}
	return nil
}

// sameStatusButLedger: a and b differ in their ledgers at most (and the
// schema level the ledger write stamps).
func sameStatusButLedger(a, b operatorv1alpha1.GlusterClusterStatus) bool {
	a.Ledger, b.Ledger = nil, nil
	a.StatusSchema, b.StatusSchema = 0, 0
	return equality.Semantic.DeepEqual(a, b)
}
