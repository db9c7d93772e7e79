package states

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// waitFacts is a group of snapshot facts that only another machine's (or
// another node's) record changes, and the reports of which any one
// delivers such a change to a waiting node.
type waitFacts struct {
	what    string
	wakes   []Wake
	perturb func(r *rand.Rand, s *NodeSnapshot)
}

// crossMachineFacts are the facts a node decides from that nothing of
// its own reports: heal-info and brick status of its and its moved
// bricks' replica sets (the heal machine's record of their volumes),
// where bricks can go (a set healed, or another node Online), and the
// other nodes (a volume's down node, the nodes ahead in an upgrade batch).
var crossMachineFacts = []waitFacts{
	{"heal-info and brick status of the node's replica sets", []Wake{WakeVolumes}, func(r *rand.Rand, s *NodeSnapshot) {
		n := func() int { return r.IntN(3) }
		s.BricksOnNode, s.BricksOffline, s.SoleHealedCopies, s.QuorumAtRisk = n(), n(), n(), n()
		s.ReplacementsHealing, s.PendingHealEntries, s.SplitBrainEntries, s.BricksUnreachable = n(), int64(n()), int64(n()), n()
	}},
	{"where the node's bricks can go", []Wake{WakeVolumes, WakePool}, func(r *rand.Rand, s *NodeSnapshot) {
		s.NextBrickVolume, s.NextBrickPath, s.DrainBlockedReason = "", "", ""
		if r.IntN(2) == 0 {
			s.NextBrickVolume, s.NextBrickPath = "vol2", "/bricks/vol2"
		} else if r.IntN(2) == 0 {
			s.DrainBlockedReason = "no room"
		}
	}},
	{"a volume's down node", []Wake{WakePool, WakeVolumes}, func(r *rand.Rand, s *NodeSnapshot) {
		s.VolumeNodeDown = ""
		if r.IntN(2) == 0 {
			s.VolumeNodeDown = "node y is down"
		}
	}},
	{"the cluster's first node joining GD2", []Wake{WakePool}, func(r *rand.Rand, s *NodeSnapshot) {
		s.JoinAfter = ""
		if r.IntN(2) == 0 {
			s.JoinAfter = "n0"
		}
	}},
	{"the nodes ahead in the upgrade batch", []Wake{WakePool}, func(r *rand.Rand, s *NodeSnapshot) {
		s.UpgradeAhead = nil
		if r.IntN(2) == 0 {
			s.UpgradeAhead = []string{"n2"}
		}
	}},
}

// randomWaitingNode is randomNode with the facts it leaves out: the upgrade
// batch ahead, unreachable bricks, the peer watch, the node to join after
// and a lost pod.
func randomWaitingNode(r *rand.Rand) NodeSnapshot {
	s := randomNode(r)
	s.BricksUnreachable = r.IntN(3)
	s.PeerWatched = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		s.UpgradeAhead = []string{"n2"}
	}
	if r.IntN(3) == 0 {
		s.JoinAfter = "n0"
	}
	if r.IntN(3) == 0 {
		s.LostPod = LostPod{
			Terminating: true, NodeLost: true, KubeNode: "k1",
			DeleteDeadline: t0.Add(time.Duration(r.IntN(5)-2) * time.Minute),
			NodeLostSince:  t0.Add(-time.Duration(r.IntN(5)) * time.Minute), Grace: 2 * time.Minute,
			StorageChecked: r.IntN(2) == 0, StorageMovable: r.IntN(2) == 0, StorageNote: "a local volume",
		}
	}
	return s
}

// Every wait of the node machine is in nodeWaits, and a wait that another
// machine's record can end (the decision acts once that record changes)
// names the report that delivers it, unless it looks again within a
// second on its own. So no wait of a drain, an upgrade, a recovery or a
// deletion sits out pollLong while the heal or the node it waits for has
// already happened; wake.VolumeReportsChanged and the dispatcher's key
// mapping wake whoever names the report (kube/machines).
func TestEveryNodeWaitSaysWhatWakesIt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	for range 100000 {
		s := randomWaitingNode(r)
		d := DecideNode(s)
		if !d.Waiting() || d.Reason == ReasonUnknownState {
			continue
		}
		seen[d.Reason] = true
		w, ok := NodeWaitFor(d.Reason)
		if !ok {
			t.Fatalf("state %s waits with reason %s, which nodeWaits does not list (say what it waits for and what wakes it)\nsnapshot: %+v", s.State, d.Reason, s)
		}
		if d.RequeueAfter > 0 && d.RequeueAfter <= pollUpgrade {
			continue
		}
		for _, g := range crossMachineFacts {
			if slices.ContainsFunc(g.wakes, w.WokenBy) {
				continue
			}
			for range 4 {
				p := s
				g.perturb(r, &p)
				if dp := DecideNode(p); !dp.Waiting() {
					t.Fatalf("state %s, wait %s (looks again after %s): the node acts (%s%s) once %s change, which only %v report, "+
						"and nodeWaits names none of them\nsnapshot: %+v\nchanged:  %+v", s.State, d.Reason, d.RequeueAfter, dp.Event, dp.Step, g.what, g.wakes, s, p)
				}
			}
		}
	}
	for _, reason := range NodeWaitReasons() {
		if !seen[reason] {
			t.Errorf("nodeWaits lists %s, which no node decision waits with", reason)
		}
	}
}

// The waits of a drain, an upgrade and a deletion that depend on a heal
// are woken by the heal machine's record: the table's rows for them are
// what kube/machines reads to decide whom a volume report wakes.
func TestHealWaitsAreWokenByVolumeReports(t *testing.T) {
	for _, reason := range []string{ReasonReplacementHealing, ReasonSoleHealedCopy, ReasonQuorumAtRisk, ReasonHealPending, ReasonSplitBrain, ReasonBricksStillOnNode} {
		w, _ := NodeWaitFor(reason)
		if !w.WokenBy(WakeVolumes) {
			t.Errorf("%s is not woken by a volume report", reason)
		}
	}
	if w, _ := NodeWaitFor(ReasonReplacementHealing); !w.OnMovedVolumes {
		t.Errorf("a drain waiting for its replacements names their volumes (status.movedBricks)")
	}
	for _, reason := range NodeWaitReasons() {
		w, _ := NodeWaitFor(reason)
		if strings.TrimSpace(w.For) == "" {
			t.Errorf("%s does not say what it waits for", reason)
		}
	}
}
