package cluster

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// scaleLedgerEntries are the ledger entries of a scaleNodes step about to
// run: one createNodes entry per template that gains nodes, one
// decommissionNode entry per node asked to leave, from the plan the
// action carries out (states.PlanScale, through objects.ScalePlanOf) over
// the live cluster and its live GlusterNodes (see Syncer.GatherLive).
func scaleLedgerEntries(plan objects.ScalePlan, d states.Decision, phase fsm.State, now time.Time) []operatorv1alpha1.LedgerEntry {
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
	return out
}

// driversLedgerEntry is the entry of an ensureDrivers step: the objects
// the snapshot found missing or out of date, which the action creates.
func driversLedgerEntry(missing []string, d states.Decision, phase fsm.State, now time.Time) operatorv1alpha1.LedgerEntry {
	objs := slices.Clone(missing)
	if len(objs) > machinestatus.MaxLedgerItems {
		objs = objs[:machinestatus.MaxLedgerItems]
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
	if len(kv) > machinestatus.MaxLedgerItems {
		kv = kv[:machinestatus.MaxLedgerItems]
	}
	return operatorv1alpha1.LedgerEntry{
		Time: metav1.Time{Time: now}, Action: operatorv1alpha1.LedgerActionSetClusterOptions, Options: kv, State: string(phase), Reason: d.Reason,
	}
}

// copyNodeLedgers is what the ledgers of cluster's GlusterNodes among
// nodes hold that its ledger does not yet, oldest first (a stable order
// across nodes).
func copyNodeLedgers(ledger []operatorv1alpha1.LedgerEntry, cluster string, nodes []*operatorv1alpha1.GlusterNode) []operatorv1alpha1.LedgerEntry {
	var out []operatorv1alpha1.LedgerEntry
	for _, n := range nodes {
		if n.Spec.Cluster != cluster {
			continue
		}
		out = append(out, machinestatus.LedgerToCopy(ledger, n.Name, n.Status.Ledger)...)
	}
	slices.SortStableFunc(out, func(a, b operatorv1alpha1.LedgerEntry) int { return a.Time.Compare(b.Time.Time) })
	return out
}
