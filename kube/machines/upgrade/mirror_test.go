package upgrade

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// mirroredUpgrade is an upgradeFixture whose three nodes are peers of a
// GD2 simulator, so the syncer mirrors its state onto them.
type mirroredUpgrade struct {
	*upgradeFixture
	sim       *sim.Simulator
	gd2       *gd2.Client
	peers     []gd2.Peer
	peerEdits atomic.Int32
}

func newMirroredUpgrade(t *testing.T, mutate func(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode)) *mirroredUpgrade {
	t.Helper()
	s, err := sim.New(sim.Config{Secret: fixtures.GD2Secret, Peers: 3, Zones: 3, DevicesPerPeer: 1, DeviceSize: 100 << 30})
	if err != nil {
		t.Fatal(err)
	}
	m := &mirroredUpgrade{sim: s}
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/peers/") {
			m.peerEdits.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	m.gd2, err = gd2.New(gd2.Options{Endpoint: srv.URL, Secret: fixtures.GD2Secret, Retry: &gd2.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if m.peers, err = m.gd2.ListPeers(context.Background(), gd2.Filter{}); err != nil || len(m.peers) != 3 {
		t.Fatalf("peers %v: %v", m.peers, err)
	}
	m.upgradeFixture = newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode) {
		c.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: srv.URL, AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}}
		for i, n := range nodes {
			n.Status.PeerID = m.peers[i].ID
		}
		if mutate != nil {
			mutate(c, nodes)
		}
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fixtures.Namespace, Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtures.GD2Secret)}}
	m.syncer.GD2 = &effects.GD2Clients{Secrets: k8sfake.NewClientset(secret).CoreV1()}
	return m
}

// step syncs and feeds the stored cluster back to the lister, as the
// informer would.
func (m *mirroredUpgrade) step() *operatorv1alpha1.GlusterCluster {
	m.t.Helper()
	c := m.sync()
	m.syncer.Clusters = listers.NewGlusterClusterLister(indexerWith(m.t, c))
	return c
}

// wantPeers fails unless every peer's MetaUpgrade is want (absent for "").
func (m *mirroredUpgrade) wantPeers(want string) {
	m.t.Helper()
	peers, err := m.gd2.ListPeers(context.Background(), gd2.Filter{})
	if err != nil {
		m.t.Fatal(err)
	}
	for _, p := range peers {
		got, ok := p.Metadata[transitions.MetaUpgrade]
		if want == "" && ok || want != "" && got != want {
			m.t.Fatalf("peer %s %s = %q (present %v), want %q", p.ID, transitions.MetaUpgrade, got, ok, want)
		}
	}
}

func TestUpgradeSyncerMirrorsTheRunOntoEveryPeer(t *testing.T) {
	m := newMirroredUpgrade(t, nil)
	// The sync that requests the run validates it and picks its first
	// batch (prompt states); the peers are told the state it ends in.
	c := m.step()
	if c.Status.Upgrade.State != string(states.UpgradeRollingServers) {
		t.Fatalf("upgrade %+v, want RollingServers", c.Status.Upgrade)
	}
	m.wantPeers("RollingServers/4.1.1")
	// The node machine's own key is left alone.
	p, err := m.gd2.GetPeer(context.Background(), m.peers[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Metadata[transitions.MetaState]; ok {
		t.Errorf("the upgrade mirror wrote %s: %v", transitions.MetaState, p.Metadata)
	}
}

func TestUpgradeSyncerMirrorSkipsPeersThatAlreadySayIt(t *testing.T) {
	m := newMirroredUpgrade(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers), ToVersion: "4.1.1", CurrentNodes: []string{"n-a"}}
	})
	m.step()
	m.wantPeers("RollingServers/4.1.1")
	edits := m.peerEdits.Load()
	if edits != 3 {
		t.Fatalf("%d peer edits, want one per peer", edits)
	}
	for range 3 {
		m.step()
	}
	if n := m.peerEdits.Load(); n != edits {
		t.Fatalf("%d peer edits after steady syncs; want still %d", n, edits)
	}
	// A fresh syncer (an operator restart) reads the peers and writes
	// nothing they already carry.
	m.syncer.upMirror = upgradeMirror{}
	m.step()
	if n := m.peerEdits.Load(); n != edits {
		t.Fatalf("%d peer edits after a restart; want still %d", n, edits)
	}
}

func TestUpgradeSyncerCommitsWhenGD2RefusesTheMirrorAndRepairsItLater(t *testing.T) {
	m := newMirroredUpgrade(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers), ToVersion: "4.1.1", CurrentNodes: []string{"n-a"}}
	})
	m.step()
	m.wantPeers("RollingServers/4.1.1")
	if err := m.sim.SetFaults(sim.Faults{PerOp: map[string]sim.OpFaults{"EditPeer": {ErrorRate: 1}}}); err != nil {
		t.Fatal(err)
	}
	m.cluster.Spec.Paused = true
	paused := m.cluster.DeepCopy()
	stored, err := m.anthill.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paused.Status, paused.ResourceVersion = stored.Status, stored.ResourceVersion
	if _, err := m.anthill.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Update(context.Background(), paused, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	m.syncer.Clusters = listers.NewGlusterClusterLister(indexerWith(t, paused))
	if c := m.step(); c.Status.Upgrade.State != string(states.UpgradePaused) {
		t.Fatalf("upgrade %+v with GD2 failing; want Paused committed", c.Status.Upgrade)
	}
	m.wantPeers("RollingServers/4.1.1")
	if err := m.sim.SetFaults(sim.Faults{}); err != nil {
		t.Fatal(err)
	}
	m.step()
	m.wantPeers("Paused/4.1.1")
}

func TestUpgradeSyncerWritesNothingToGD2WhenNoRunWasEverRecorded(t *testing.T) {
	m := newMirroredUpgrade(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		c.Spec.Gluster.Version = "4.1.0"
	})
	m.step()
	m.step()
	if n := m.peerEdits.Load(); n != 0 {
		t.Fatalf("%d peer edits for a cluster that never upgraded", n)
	}
	m.wantPeers("")
}

func TestUpgradeValueSaysIdleWithoutAVersion(t *testing.T) {
	if got := transitions.UpgradeValue(states.UpgradeIdle, "4.1.1"); got != "Idle" {
		t.Errorf("Idle value %q", got)
	}
	if !transitions.UpgradeValueCurrent("", false, "Idle") || transitions.UpgradeValueCurrent("", false, "Complete/4.1.1") {
		t.Error("an absent key must read as Idle, and only as Idle")
	}
}
