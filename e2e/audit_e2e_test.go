//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

// auditLine is one "configuration change" line of the operator's log.
type auditLine map[string]any

func (l auditLine) str(k string) string { s, _ := l[k].(string); return s }

// auditLines returns the operator's audit lines about namespace ns.
func auditLines(t testing.TB, ns string) []auditLine {
	t.Helper()
	var out []auditLine
	sc := bufio.NewScanner(strings.NewReader(operatorOf(t).Logs()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), effects.MessageConfigurationChange) {
			continue
		}
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.str("msg") != effects.MessageConfigurationChange {
			continue
		}
		if l.str(engine.LogNamespace) == ns {
			out = append(out, l)
		}
	}
	return out
}

// simOpAudit maps each configuration-altering GD2 operation the operator
// makes (the simulator's route names) to the audit actions that make it.
// EditPeer is made by several: metadata mirrors, adopting a bootstrap peer
// on join, and moving a peer out of its zone before a same-zone brick move.
var simOpAudit = map[string][]string{
	"AddPeer":          {effects.ActionAddPeer},
	"EditPeer":         {effects.ActionSetPeerMetadata, effects.ActionRestorePeerZone, effects.ActionReplaceBrick, effects.ActionAddPeer},
	"DeletePeer":       {effects.ActionDeletePeer},
	"DeviceAdd":        {effects.ActionRegisterDevice},
	"DeviceEdit":       {effects.ActionSetDeviceEnabled},
	"ReplaceBrick":     {effects.ActionReplaceBrick},
	"SelfHeal":         {effects.ActionTriggerHeal, effects.ActionHealReplacement},
	"VolumeOptions":    {effects.ActionHealReplacement},
	"VolumeEdit":       {effects.ActionSetVolumeMetadata},
	"ClusterOptionSet": {effects.ActionSetClusterOptions},
}

// loggedMoves returns one line per brick the log says was moved: its "ok"
// replaceBrick line, or, for a move whose outcome line a kill cut off, its
// "started" line (which names the same volume, brick, peers and why).
func loggedMoves(lines []auditLine) []auditLine {
	type brick struct {
		line                auditLine
		started, ok, failed int
	}
	var order []string
	bricks := map[string]*brick{}
	for _, l := range lines {
		if l.str(engine.LogAction) != effects.ActionReplaceBrick {
			continue
		}
		key := l.str(engine.LogVolume) + ":" + l.str(engine.LogBrick)
		b := bricks[key]
		if b == nil {
			b = &brick{}
			bricks[key] = b
			order = append(order, key)
		}
		switch l.str(engine.LogOutcome) {
		case effects.OutcomeStarted:
			b.started++
			if b.line == nil {
				b.line = l
			}
		case effects.OutcomeOK:
			b.ok++
			b.line = l
		case effects.OutcomeFailed:
			b.failed++
		}
	}
	var out []auditLine
	for _, key := range order {
		if b := bricks[key]; b.ok > 0 || b.started > b.failed {
			out = append(out, b.line)
		}
	}
	return out
}

// testOps are the operations the tests make themselves (volume set-up).
var testOps = map[string]bool{"VolumeCreate": true, "VolumeStart": true, "VolumeOptions": true}

// TestAuditLogRecordsEveryConfigurationChange decommissions the node
// holding the most bricks of a distributed-replicate volume, SIGKILLs the
// operator once while the drain moves bricks, and then checks that the
// operator's log has a "configuration change" line for every
// configuration-altering call the simulator saw succeed, and that each
// brick move names its volume, source peer and brick, target peers, state,
// step and reason.
func TestAuditLogRecordsEveryConfigurationChange(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "audit"
	createCluster(t, ns, name, 2)
	waitNodes(t, ns, name, 6, 3*time.Minute)
	g := gd2Client(t)
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "dist", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	if err := simOf(t).Write("dist", 40); err != nil {
		t.Fatal(err)
	}
	waitVolumeHealthy(t, ns, name, "dist", 2*time.Minute)

	nodes := waitNodes(t, ns, name, 6, time.Minute)
	victim := nodeWithMostBricks(t, g, nodes, "dist")
	peer := nodes[victim].Status.PeerID
	moves := bricksByPeer(t, g, "dist")[peer]
	requestOnNode(t, ns, victim, "decommission")
	waitMovedBrick(t, ns, victim, 2*time.Minute)
	restartOperator(t)
	drained(t, g, ns, name, victim, peer, "dist")
	noViolations(t)

	changes := simOf(t).Changes()
	t.Logf("configuration-altering GD2 calls the simulator saw: %v", changes)
	var lines []auditLine
	err := framework.WaitFor(context.Background(), 30*time.Second, func(context.Context) (bool, error) {
		lines = auditLines(t, ns)
		// A call GD2 saw succeed is accounted for by its "ok" line, or by
		// a "started" line whose outcome was never written because the
		// operator was killed while the call was in flight: started lines
		// less failed ones.
		made := map[string]int{}
		for _, l := range lines {
			switch l.str(engine.LogOutcome) {
			case effects.OutcomeStarted:
				made[l.str(engine.LogAction)]++
			case effects.OutcomeFailed:
				made[l.str(engine.LogAction)]--
			}
		}
		for op, n := range changes {
			if testOps[op] {
				continue
			}
			actions, known := simOpAudit[op]
			if !known {
				return false, fmt.Errorf("GD2 operation %s (%d calls) has no audit action", op, n)
			}
			logged := 0
			for _, a := range actions {
				logged += made[a]
			}
			if logged < n {
				return false, fmt.Errorf("GD2 saw %d successful %s calls, the log announces %d not failed for %v", n, op, logged, actions)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	moved := loggedMoves(lines)
	if len(moved) != changes["ReplaceBrick"] || len(moved) != moves {
		t.Errorf("%d logged brick moves, GD2 saw %d, the node held %d bricks", len(moved), changes["ReplaceBrick"], moves)
	}
	for _, l := range moved {
		targets, _ := l[engine.LogTargetPeers].([]any)
		if l.str(engine.LogVolume) != "dist" || l.str(engine.LogPeer) != peer || l.str(engine.LogBrick) == "" || len(targets) == 0 ||
			l.str(engine.LogName) != victim || l.str(engine.LogMachine) != "node" || l.str(engine.LogStep) != "moveBrick" ||
			l.str(engine.LogState) == "" || l.str(engine.LogReason) == "" {
			t.Errorf("brick move line lacks its volume, source, target or why: %v", l)
		}
	}
	t.Logf("%d audit lines for %s; brick moves: %v", len(lines), ns, moved)

	// The node is gone; the cluster's ledger still says where each brick
	// went from, to where it could go, and why.
	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ledgered []operatorv1alpha1.LedgerEntry
	var others []string
	seen, healed := map[string]bool{}, map[string]bool{}
	for _, e := range c.Status.Ledger {
		if e.Node != victim {
			continue
		}
		if e.Action == operatorv1alpha1.LedgerActionHealReplacement {
			// Each replacement's heal, made again while it fills: on
			// record at least once per move (checked below).
			healed[e.Volume+":"+e.Brick] = true
			if e.Peer != peer || len(e.Options) == 0 || e.Cause != states.ReasonDecommissionRequested {
				t.Errorf("heal ledger entry lacks its peer, options or cause: %+v", e)
			}
			continue
		}
		if e.Action != operatorv1alpha1.LedgerActionReplaceBrick {
			others = append(others, e.Action+":"+e.Cause)
			if e.Peer != peer || e.State == "" || e.Reason == "" {
				t.Errorf("ledger entry lacks its peer, state or reason: %+v", e)
			}
			continue
		}
		ledgered = append(ledgered, e)
		if seen[e.Volume+":"+e.Brick] {
			t.Errorf("the ledger records the move of %s:%s twice", e.Volume, e.Brick)
		}
		seen[e.Volume+":"+e.Brick] = true
		if e.Action != operatorv1alpha1.LedgerActionReplaceBrick || e.Peer != peer || e.Volume != "dist" || e.Brick == "" {
			t.Errorf("ledger entry lacks its action, source or brick: %+v", e)
		}
		if e.Cause != states.ReasonDecommissionRequested {
			t.Errorf("ledger entry does not say the drain was a decommission: %+v", e)
		}
		if len(e.TargetPeers) == 0 || e.Reason == "" || e.State == "" {
			t.Errorf("ledger entry lacks its targets or reason: %+v", e)
		}
	}
	for brick := range seen {
		if !healed[brick] {
			t.Errorf("the ledger records the move of %s but not the heal anthill made GD2 run for its replacement", brick)
		}
	}
	if len(ledgered) != moves {
		t.Errorf("the ledger records %d moves off %s, want %d: %+v", len(ledgered), victim, moves, c.Status.Ledger)
	}
	// Closing the devices, deleting the peer and deleting the workload are
	// the decommission's other lasting changes, each recorded once.
	d := states.ReasonDecommissionRequested
	if want := []string{"disableDevices:" + d, "deletePeer:" + d, "deleteWorkload:" + d}; fmt.Sprint(others) != fmt.Sprint(want) {
		t.Errorf("the ledger's other changes of %s are %v, want %v", victim, others, want)
	}
	for _, l := range moved {
		if !seen[l.str(engine.LogVolume)+":"+l.str(engine.LogBrick)] {
			t.Errorf("the logged move %s:%s is not in the ledger", l.str(engine.LogVolume), l.str(engine.LogBrick))
		}
	}
}
