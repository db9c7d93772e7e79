package upgrade

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// upgradeMirror remembers, per cluster, the MetaUpgrade value each peer
// is known to carry, so that a sync whose value every peer already has
// makes no GD2 call at all. It is only a cache of what GD2 said or
// accepted: after a restart it is empty and the first sync re-reads the
// peers.
type upgradeMirror struct {
	mu    sync.Mutex
	known map[engine.Key]map[string]string // cluster → peer id → value
}

// mirror writes the upgrade machine's state (as now persisted in
// status.upgrade) onto every peer of the cluster's nodes whose MetaUpgrade
// does not already say it. It follows each committed transition and
// repeats on every later sync until each peer carries the value; a
// failure (GD2 unreachable, a peer down) is logged, never returned: the
// transition stands and the next sync writes again.
func (s *Syncer) mirror(ctx context.Context, c *operatorv1alpha1.GlusterCluster) {
	if s.GD2 == nil || c.Status.Upgrade == nil {
		// No run has ever been recorded: no peer needs a value.
		return
	}
	up := c.Status.Upgrade
	state := fsm.State(up.State)
	if !upgradeDef.HasState(state) {
		return
	}
	// The run's target; while a run is validated it is the version being
	// validated (status.upgrade.toVersion is fixed when validation passes).
	target := up.ToVersion
	switch states.UpgradeMeaning(state).Target {
	case states.NoRunTarget:
		target = ""
	case states.SpecTarget:
		target = objects.ClusterVersion(c)
	}
	want := transitions.UpgradeValue(state, target)
	key := gather.UpgradeKey(c.Namespace, c.Name)
	peers, err := s.clusterPeers(c)
	if err != nil || len(peers) == 0 {
		return
	}
	s.upMirror.mu.Lock()
	known := s.upMirror.known[key]
	done := !slices.ContainsFunc(peers, func(id string) bool { return known[id] != want })
	s.upMirror.mu.Unlock()
	if done {
		return
	}
	err = s.writeUpgradeValue(ctx, c, key, peers, want)
	if err != nil && !errors.Is(err, context.Canceled) {
		s.Log.Log.Info("mirroring upgrade state into GD2 failed; retrying next sync",
			zap.String(engine.LogMachine, states.UpgradeMachine), zap.String(engine.LogNamespace, c.Namespace), zap.String(engine.LogName, c.Name), zap.Error(err))
	}
}

// clusterPeers lists the peer ids of the cluster's nodes, sorted.
func (s *Syncer) clusterPeers(c *operatorv1alpha1.GlusterCluster) ([]string, error) {
	nodes, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes {
		if n.Spec.Cluster == c.Name && n.Status.PeerID != "" {
			out = append(out, n.Status.PeerID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// writeUpgradeValue reads the peers' metadata once and writes want onto
// each listed peer that is online and does not carry it.
func (s *Syncer) writeUpgradeValue(ctx context.Context, c *operatorv1alpha1.GlusterCluster, key engine.Key, peers []string, want string) error {
	gc, err := s.GD2.For(ctx, c)
	if err != nil {
		return err
	}
	// The shared list (effects.PoolViews) is enough: a value it shows
	// stale is written again (the write is idempotent), and every write
	// drops the view, so the next read sees it.
	live, err := s.GD2.Shared(c, gc).ListPeers(ctx, gd2.Filter{})
	if err != nil {
		return fmt.Errorf("list peers: %w", err)
	}
	ops := s.Audit.Ops(transitions.Ops{GD2: &effects.GD2{Client: gc}}).GD2
	var state string
	if c.Status.Upgrade != nil {
		state = c.Status.Upgrade.State
	}
	ctx = engine.WithAction(ctx, engine.ActionContext{
		Machine: states.UpgradeMachine, Namespace: c.Namespace, Name: c.Name, State: state, Action: machinestatus.ActionMirror, Reason: machinestatus.ReasonMirror,
	})
	s.upMirror.mu.Lock()
	if s.upMirror.known == nil {
		s.upMirror.known = map[engine.Key]map[string]string{}
	}
	known := s.upMirror.known[key]
	if known == nil {
		known = map[string]string{}
		s.upMirror.known[key] = known
	}
	s.upMirror.mu.Unlock()
	var errs []error
	for _, p := range live {
		if _, ours := slices.BinarySearch(peers, p.ID); !ours {
			continue
		}
		cur, present := p.Metadata[transitions.MetaUpgrade]
		if transitions.UpgradeValueCurrent(cur, present, want) {
			s.remember(known, p.ID, want)
			continue
		}
		if add := map[string]string{transitions.MetaUpgrade: want}; !transitions.MetadataFits(p.Metadata, add) {
			errs = append(errs, fmt.Errorf("peer %s: its metadata leaves no room for %v within GD2's %d bytes", p.ID, add, transitions.MetadataLimit))
			continue
		}
		if !p.Online {
			// A peer that is down is written once it is back: its value
			// matters to whoever reads it from a live pool.
			continue
		}
		if err := transitions.MirrorUpgradeState(ctx, ops, p.ID, want); err != nil {
			errs = append(errs, err)
			continue
		}
		s.remember(known, p.ID, want)
	}
	return errors.Join(errs...)
}

func (s *Syncer) remember(known map[string]string, peer, value string) {
	s.upMirror.mu.Lock()
	defer s.upMirror.mu.Unlock()
	known[peer] = value
}

// forgetMirror drops what the syncer remembers of a deleted cluster.
func (s *Syncer) forgetMirror(key engine.Key) {
	s.upMirror.mu.Lock()
	defer s.upMirror.mu.Unlock()
	delete(s.upMirror.known, key)
}
