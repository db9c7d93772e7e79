package transitions

import (
	"testing"

	"context"
	"fmt"
	"maps"
)

// world is a stateful fake of Kubernetes and GD2 that behaves like the real
// ones where idempotency matters: it refuses what GD2 refuses, and it lets
// tests fail any method on demand.
type world struct {
	workloads map[string]string            // node key → version running
	peers     map[string]map[string]string // peer id → metadata
	devices   map[string]map[string]bool   // peer id → device → enabled
	bricks    map[string]string            // "volume:path" → peer id
	heals     map[string]int               // volume → heals triggered
	// replacementHeals: volume → healReplacement calls.
	replacementHeals map[string]int
	volumeMeta       map[string]map[string]string // volume → metadata
	infra            map[string]bool              // cluster key → infra exists
	nodes            map[string]int               // cluster key → node count
	csi              map[string]string            // cluster key → CSI version
	lostPods         map[string]string            // node key → UID of its pod stuck on a lost node
	drivers          map[string]bool              // cluster key → CSI drivers exist
	nextID           int
	fail             map[string]error // method → error to return
	calls            []string
}

func newWorld() *world {
	return &world{
		workloads: map[string]string{}, peers: map[string]map[string]string{},
		devices: map[string]map[string]bool{}, bricks: map[string]string{},
		heals: map[string]int{}, replacementHeals: map[string]int{}, infra: map[string]bool{}, nodes: map[string]int{},
		csi: map[string]string{}, drivers: map[string]bool{}, fail: map[string]error{},
		lostPods: map[string]string{},
	}
}

func (w *world) ops() Ops { return Ops{Kube: w, GD2: w} }

func (w *world) call(name string) error {
	w.calls = append(w.calls, name)
	return w.fail[name]
}

// snapshot copies the observable state, for comparing before and after.
func (w *world) snapshot() string {
	return fmt.Sprint(w.workloads, w.peers, w.devices, w.bricks, w.heals, w.infra, w.nodes, w.csi, w.lostPods, w.drivers)
}

func (w *world) EnsureNodeWorkload(_ context.Context, n NodeTarget) error {
	if err := w.call("EnsureNodeWorkload"); err != nil {
		return err
	}
	if _, ok := w.workloads[n.NodeKey()]; !ok {
		w.workloads[n.NodeKey()] = "initial"
	}
	return nil
}

func (w *world) RollNodeWorkload(_ context.Context, n NodeTarget, version string) error {
	if err := w.call("RollNodeWorkload"); err != nil {
		return err
	}
	w.workloads[n.NodeKey()] = version
	return nil
}

func (w *world) LeaveManagementService(_ context.Context, n NodeTarget) error {
	return w.call("LeaveManagementService")
}

func (w *world) DeleteNodeWorkload(_ context.Context, n NodeTarget) error {
	if err := w.call("DeleteNodeWorkload"); err != nil {
		return err
	}
	delete(w.workloads, n.NodeKey())
	return nil
}

func (w *world) ForceDeleteLostPod(_ context.Context, n NodeTarget) error {
	if err := w.call("ForceDeleteLostPod"); err != nil {
		return err
	}
	if w.lostPods[n.NodeKey()] == n.LostPodUID {
		delete(w.lostPods, n.NodeKey())
	}
	return nil
}

func (w *world) AddPeer(_ context.Context, address, zone string, md map[string]string) (string, error) {
	if err := w.call("AddPeer"); err != nil {
		return "", err
	}
	for id, m := range w.peers {
		if m[MetaNode] == md[MetaNode] {
			return id, nil
		}
	}
	w.nextID++
	id := fmt.Sprintf("peer-%d", w.nextID)
	m := maps.Clone(md)
	m["_zone"] = zone
	w.peers[id] = m
	return id, nil
}

func (w *world) RegisterDevice(_ context.Context, peerID, device, _ string) error {
	if err := w.call("RegisterDevice"); err != nil {
		return err
	}
	if _, ok := w.peers[peerID]; !ok {
		return fmt.Errorf("peer not found")
	}
	if w.devices[peerID] == nil {
		w.devices[peerID] = map[string]bool{}
	}
	if _, ok := w.devices[peerID][device]; !ok {
		w.devices[peerID][device] = true
	}
	return nil
}

func (w *world) SetDeviceEnabled(_ context.Context, peerID, device string, enabled bool) error {
	if err := w.call("SetDeviceEnabled"); err != nil {
		return err
	}
	if _, ok := w.devices[peerID][device]; !ok {
		return fmt.Errorf("device does not exist in the given peer")
	}
	w.devices[peerID][device] = enabled
	return nil
}

func (w *world) SetPeerMetadata(_ context.Context, peerID string, md map[string]string) error {
	if err := w.call("SetPeerMetadata"); err != nil {
		return err
	}
	if _, ok := w.peers[peerID]; !ok {
		return fmt.Errorf("peer not found")
	}
	maps.Copy(w.peers[peerID], md)
	return nil
}

func (w *world) BrickOnPeer(_ context.Context, volume, peerID, path string) (bool, error) {
	if err := w.call("BrickOnPeer"); err != nil {
		return false, err
	}
	return w.bricks[volume+":"+path] == peerID, nil
}

// ReplaceBrick mimics GD2: it does not check the source, so a careless
// second call would move some other brick.
func (w *world) ReplaceBrick(_ context.Context, volume, src, path string, _ MoveTo) error {
	if err := w.call("ReplaceBrick"); err != nil {
		return err
	}
	k := volume + ":" + path
	if w.bricks[k] != src {
		w.bricks[volume+":/some/other/brick"] = "peer-elsewhere"
		return nil
	}
	w.bricks[k] = "peer-elsewhere"
	return nil
}

// RestorePeerZone records the call; the fake never moves peers between
// zones, so there is nothing to restore.
func (w *world) RestorePeerZone(_ context.Context, peerID string) error {
	return w.call("RestorePeerZone")
}

func (w *world) DeletePeer(_ context.Context, peerID string) error {
	if err := w.call("DeletePeer"); err != nil {
		return err
	}
	for _, p := range w.bricks {
		if p == peerID {
			return fmt.Errorf("cannot delete peer, peer has bricks")
		}
	}
	delete(w.peers, peerID)
	return nil
}

func (w *world) SetClusterOptions(_ context.Context, options map[string]string) error {
	if err := w.call("SetClusterOptions"); err != nil {
		return err
	}
	for k, v := range options {
		w.infra["option/"+k+"="+v] = true
	}
	return nil
}

func (w *world) HealReplacement(_ context.Context, volume string) error {
	if err := w.call("HealReplacement"); err != nil {
		return err
	}
	w.replacementHeals[volume]++
	return nil
}

func (w *world) TriggerHeal(_ context.Context, volume string) error {
	if err := w.call("TriggerHeal"); err != nil {
		return err
	}
	w.heals[volume] = 1
	return nil
}

func (w *world) ForceStartBricks(_ context.Context, volume string) error {
	if err := w.call("ForceStartBricks"); err != nil {
		return err
	}
	w.infra["started/"+volume] = true
	return nil
}

func (w *world) SetVolumeMetadata(_ context.Context, volume string, md map[string]string) error {
	if err := w.call("SetVolumeMetadata"); err != nil {
		return err
	}
	if w.volumeMeta == nil {
		w.volumeMeta = map[string]map[string]string{}
	}
	if w.volumeMeta[volume] == nil {
		w.volumeMeta[volume] = map[string]string{}
	}
	for k, v := range md {
		w.volumeMeta[volume][k] = v
	}
	return nil
}

func (w *world) EnsureClusterInfra(_ context.Context, c ClusterTarget) error {
	if err := w.call("EnsureClusterInfra"); err != nil {
		return err
	}
	w.infra[key(c)] = true
	return nil
}

func (w *world) ScaleNodes(_ context.Context, c ClusterTarget, desired int) error {
	if err := w.call("ScaleNodes"); err != nil {
		return err
	}
	w.nodes[key(c)] = desired
	return nil
}

func (w *world) DeleteNodes(_ context.Context, c ClusterTarget) error {
	if err := w.call("DeleteNodes"); err != nil {
		return err
	}
	delete(w.nodes, key(c))
	return nil
}

func (w *world) DeleteClusterInfra(_ context.Context, c ClusterTarget) error {
	if err := w.call("DeleteClusterInfra"); err != nil {
		return err
	}
	delete(w.infra, key(c))
	delete(w.drivers, key(c))
	return nil
}

func (w *world) EnsureCSIDrivers(_ context.Context, c ClusterTarget) error {
	if err := w.call("EnsureCSIDrivers"); err != nil {
		return err
	}
	w.drivers[key(c)] = true
	return nil
}

// SyncEndpoints publishes the external cluster's addresses; the fake keeps
// them as one more piece of infrastructure.
func (w *world) SyncEndpoints(_ context.Context, c ClusterTarget) error {
	if err := w.call("SyncEndpoints"); err != nil {
		return err
	}
	w.infra[key(c)+"/endpoints"] = true
	return nil
}

func (w *world) SetCSIVersion(_ context.Context, c ClusterTarget, version string) error {
	if err := w.call("SetCSIVersion"); err != nil {
		return err
	}
	w.csi[key(c)] = version
	return nil
}

// every lists a machine's actions by name, events and steps alike, for
// tests that run each one.
func every[A any](a Actions[A]) map[string]A {
	out := map[string]A{}
	for e, act := range a.Events {
		out[string(e)] = act
	}
	for s, act := range a.Steps {
		out[string(s)] = act
	}
	return out
}

// named looks up a machine's action by name, event or step.
func named[A any](t *testing.T, a Actions[A], name string) A {
	t.Helper()
	act, ok := every(a)[name]
	if !ok {
		t.Fatalf("%s has no action %q", a.Machine, name)
	}
	return act
}

func (w *world) IssueCertificates(_ context.Context, c ClusterTarget) error {
	if err := w.call("IssueCertificates"); err != nil {
		return err
	}
	w.infra[key(c)+"/certificates"] = true
	return nil
}
