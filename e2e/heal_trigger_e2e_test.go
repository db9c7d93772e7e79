//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/states"
)

// TestHealTriggerFailureStillHeals: GD2 answers every heal trigger with its
// code-2 selfheal.Heal failure (the RPC to the self-heal daemons failed)
// while the daemons keep crawling. A volume with a backlog after a peer's
// outage is watched in Healing with reason HealTriggerFailed instead of
// failing its heal, and reaches Healthy. The operator is SIGKILLed the
// moment it announces that transition, and the simulator sees no
// violation.
func TestHealTriggerFailureStillHeals(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "trig"
	// The daemons crawl slowly enough that the backlog outlives the
	// operator's next heal refresh: a backlog healed before the operator
	// triggers a heal never meets the failing trigger.
	createClusterWithSim(t, ns, name, 1, framework.SimOptions{Seed: 7, WriteRate: 20, HealRate: 5})
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	g := gd2Client(t)
	createReplicatedVolume(t, g, "data")
	waitVolumeHealthy(t, ns, name, "data", 2*time.Minute)

	if err := simOf(t).SetFaults(sim.Faults{HealTriggerFailRate: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = simOf(t).SetFaults(sim.Faults{}) })
	fired, disarm := operatorOf(t).KillOnLine(func(line []byte) bool {
		l, ok := parseTransition(line)
		return ok && l.Namespace == ns && l.Machine == states.HealMachine && l.To == string(states.HealHealing)
	})
	defer disarm()

	// A short outage of one brick's peer under writes leaves a backlog.
	var peer string
	for _, n := range nodes {
		peer = n.Status.PeerID
		break
	}
	partition(t, peer, true)
	waitVolumeState(t, ns, name, "data", string(states.HealHealPending), time.Minute)
	partition(t, peer, false)

	restartWhenFired(t, ns, fired, 2*time.Minute, "the volume never went to Healing")
	waitVolumeHealthy(t, ns, name, "data", 2*time.Minute)

	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, h := range c.Status.History {
		if h.Machine == states.HealMachine && h.Subject == "data" && h.To == string(states.HealHealing) && h.Reason == states.ReasonHealTriggerFailed {
			said = true
		}
	}
	if !said {
		t.Errorf("no Healing record with reason %s in the history: %+v", states.ReasonHealTriggerFailed, c.Status.History)
	}
	if n := simOf(t).InjectedFaults()["shd-rpc"]; n == 0 {
		t.Errorf("the simulator failed no heal trigger (injected %v): the test proves nothing", simOf(t).InjectedFaults())
	}
	noViolations(t)
}
