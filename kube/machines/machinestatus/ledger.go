package machinestatus

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// MaxLedgerItems bounds the objects and options of one ledger entry (the
// API's MaxItems).
const MaxLedgerItems = 64

// NodeLedger is a GlusterNode's status.ledger: the lasting changes of the
// node machine's actions, put on record before they run.
type NodeLedger struct{}

// Note puts changes on record in node's ledger, each unless the ledger
// already records it (a step repeated, an action retried after it
// failed), keeping the newest MaxNodeLedger entries. It reports whether
// node changed: the runner then writes the record, and the action waits
// for a later sync.
func (NodeLedger) Note(node *operatorv1alpha1.GlusterNode, changes []states.Change, now time.Time) bool {
	return note(&node.Status.Ledger, changes, now, operatorv1alpha1.MaxNodeLedger)
}

// ClusterLedger is a GlusterCluster's status.ledger: the lasting changes
// of the actions of the machines persisted in the cluster's status (and
// the copies of its nodes' ledgers).
type ClusterLedger struct{}

// Note puts changes on record in c's ledger unless it already records
// them (withLedgerEntries), keeping the newest MaxLedger entries. It
// reports whether c changed.
func (ClusterLedger) Note(c *operatorv1alpha1.GlusterCluster, changes []states.Change, now time.Time) bool {
	return note(&c.Status.Ledger, changes, now, operatorv1alpha1.MaxLedger)
}

// note sets *ledger to it with the entries of changes it lacks appended,
// bounded to max, and reports whether that changed it.
func note(ledger *[]operatorv1alpha1.LedgerEntry, changes []states.Change, now time.Time, max int) bool {
	if len(changes) == 0 {
		return false
	}
	next, changed := withLedgerEntries(*ledger, LedgerEntries(changes, now), max)
	if changed {
		*ledger = next
	}
	return changed
}

// LedgerEntries are the ledger entries of changes put on record at now:
// the objects and options each names are bounded to MaxLedgerItems, as
// the API bounds them.
func LedgerEntries(changes []states.Change, now time.Time) []operatorv1alpha1.LedgerEntry {
	out := make([]operatorv1alpha1.LedgerEntry, 0, len(changes))
	for _, c := range changes {
		out = append(out, operatorv1alpha1.LedgerEntry{
			Time: metav1.Time{Time: now}, Action: c.Action, Node: c.Node, Peer: c.Peer,
			Volume: c.Volume, Brick: c.Brick, TargetPeers: c.TargetPeers, Version: c.Version,
			Template: c.Template, Count: c.Count, Objects: bounded(c.Objects), Options: bounded(c.Options),
			State: c.State, Reason: c.Reason, Cause: c.Cause,
		})
	}
	return out
}

// bounded is items, at most MaxLedgerItems of them.
func bounded(items []string) []string {
	if len(items) > MaxLedgerItems {
		return items[:MaxLedgerItems]
	}
	return items
}

// withLedgerEntries is ledger with the entries it lacks appended, its
// oldest entries dropped beyond max.
// Entries of a node are each checked on their own (ledgerHas); the
// cluster-wide ones (no node) of one write are one change, recorded when
// the ledger's latest cluster-wide entries are already they
// (ledgerHasClusterChange).
func withLedgerEntries(ledger, entries []operatorv1alpha1.LedgerEntry, max int) ([]operatorv1alpha1.LedgerEntry, bool) {
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
		case e.Node != "" && LedgerHas(out, e):
			continue
		}
		out, changed = append(append([]operatorv1alpha1.LedgerEntry(nil), out...), e), true
	}
	if over := len(out) - max; over > 0 {
		out = append([]operatorv1alpha1.LedgerEntry(nil), out[over:]...)
	}
	return out, changed
}

// LedgerHas reports whether ledger records the change e of a node
// records. A brick move happens once (the brick is gone from the node
// after it), so any entry of the same action, node, volume and brick is
// it. Other changes recur (a node drained twice, upgraded twice): e is
// recorded when the node's latest entry is the same change (action,
// version, template).
func LedgerHas(ledger []operatorv1alpha1.LedgerEntry, e operatorv1alpha1.LedgerEntry) bool {
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

// AppendBounded is ledger with e appended, its oldest entries dropped
// beyond max.
func AppendBounded(ledger []operatorv1alpha1.LedgerEntry, e operatorv1alpha1.LedgerEntry, max int) []operatorv1alpha1.LedgerEntry {
	out := append(append([]operatorv1alpha1.LedgerEntry(nil), ledger...), e)
	if over := len(out) - max; over > 0 {
		out = out[over:]
	}
	return out
}

// LedgerToCopy is what of node's own ledger (entries, oldest first) its
// cluster's ledger still lacks: the entries after the cluster's latest
// entry of the node. When the node's ledger no longer holds that entry
// (its oldest were dropped, or an earlier release wrote the cluster's
// directly), the entries after its time. A full cluster ledger has
// dropped what is older than its oldest entry: that is never copied back.
func LedgerToCopy(cluster []operatorv1alpha1.LedgerEntry, node string, entries []operatorv1alpha1.LedgerEntry) []operatorv1alpha1.LedgerEntry {
	from := 0
	for j := len(cluster) - 1; j >= 0; j-- {
		have := cluster[j]
		if have.Node != node {
			continue
		}
		i := slices.IndexFunc(entries, func(e operatorv1alpha1.LedgerEntry) bool { return equality.Semantic.DeepEqual(e, have) })
		if i >= 0 {
			from = i + 1
			break
		}
		for from < len(entries) && !entries[from].Time.After(have.Time.Time) {
			from++
		}
		break
	}
	out := entries[from:]
	if len(cluster) >= operatorv1alpha1.MaxLedger {
		oldest := cluster[0].Time
		for len(out) > 0 && out[0].Time.Before(&oldest) {
			out = out[1:]
		}
	}
	return out
}
