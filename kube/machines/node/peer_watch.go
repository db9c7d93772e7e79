package node

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/wake"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// peerWatchWorkers bounds the clusters whose lists the peer watch reads at
// once: a hung GD2 holds one worker for the GD2 timeout, not the watch.
const peerWatchWorkers = 16

// PeerWatch follows GD2 liveness for the node machine. A peer can die, or
// come back, with no Kubernetes object changing, so without it every node
// at rest re-reads GD2 on a timer of its own: a sync per node every few
// seconds, the fleet's largest steady cost. Instead, the watch reads each
// cluster's peer list live every states.PeerWatchInterval and keeps it as
// the cluster's shared view (so the syncs of that interval, of its nodes
// and of its other machines, are served that read), with the device list
// through the same view, and enqueues each node whose reading changed:
// GD2 answering or not, its peer listed or not, alive or not, its device
// counts; and each node whose peer does not yet show its state
// (anthill-state: the mirror of a transition that GD2 failed), every
// round until it does. The node machine then decides from a fresh read,
// as before; the watch decides nothing and writes nothing.
//
// A node's first reading enqueues it too (a node created, or an operator
// just started, is synced at once anyway; the queue holds a key once).
// Nodes of external clusters are not anthill's to follow and are skipped.
type PeerWatch struct {
	Clusters listers.GlusterClusterLister
	Nodes    listers.GlusterNodeLister
	GD2      *effects.GD2Clients
	// Enqueue puts a node's key on the dispatcher's queue.
	Enqueue func(engine.Key)
	// Interval is the read interval of a cluster whose failure policy
	// sets no liveness window (the shared view's interval).
	Interval time.Duration
	Clock    clock.Clock
	Log      *zap.Logger

	mu       sync.Mutex
	clusters map[string]*watchedCluster
}

// watchedCluster is what the watch keeps of one cluster between rounds.
type watchedCluster struct {
	// last is when its lists were last read; busy while a read runs.
	last time.Time
	busy bool
	// readings is the last reading of each of its nodes, by name.
	readings map[string]peerReading
}

// peerReading is what a node's decisions at rest take from its cluster's
// peer and device lists (the GD2 facts of states.NodeSnapshot that the
// liveness waits depend on).
type peerReading struct {
	reachable, known, alive bool
	peerID                  string
	enabled, disabled       int
	// unmirrored: the peer's anthill-state is not the node's state
	// (mirrorDue), so the node's next sync writes it.
	unmirrored bool
}

// readingOf is node's reading in peers and devices, read with err.
func readingOf(node *operatorv1alpha1.GlusterNode, peers []gd2.Peer, devices []gd2.Device, err error) peerReading {
	if err != nil {
		return peerReading{}
	}
	r := peerReading{reachable: true}
	if p := nodePeer(node, peers); p != nil {
		r.known, r.alive, r.peerID = true, p.Online, p.ID
		r.enabled, r.disabled = peerDevices(p.ID, devices)
		r.unmirrored = node.Status.State != "" && mirrorDue(p, fsm.State(node.Status.State))
	}
	return r
}

// Run reads every due cluster until ctx ends (looking every
// states.PeerWatchFast for the clusters due), then waits for the reads in
// flight.
func (w *PeerWatch) Run(ctx context.Context) {
	tick := min(states.PeerWatchFast, w.Interval)
	if tick <= 0 {
		tick = time.Second
	}
	sem := make(chan struct{}, peerWatchWorkers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		for _, read := range w.Round(ctx) {
			wg.Go(func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				defer func() { <-sem }()
				read()
			})
		}
		select {
		case <-ctx.Done():
			return
		case <-w.Clock.After(tick):
		}
	}
}

// Round returns a read of every cluster that is due and has none in
// flight, marking them in flight, and forgets the clusters that are gone.
func (w *PeerWatch) Round(ctx context.Context) []func() {
	clusters, err := w.Clusters.List(labels.Everything())
	if err != nil {
		return nil
	}
	now := w.Clock.Now()
	seen := make(map[string]bool, len(clusters))
	var reads []func()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.clusters == nil {
		w.clusters = map[string]*watchedCluster{}
	}
	for _, c := range clusters {
		if objects.IsExternal(c) {
			continue
		}
		id := c.Namespace + "/" + c.Name
		seen[id] = true
		wc, ok := w.clusters[id]
		if !ok {
			wc = &watchedCluster{}
			w.clusters[id] = wc
		}
		if wc.busy || now.Sub(wc.last) < states.PeerWatchFast {
			continue
		}
		_, grace, recovery := gather.FailureWindows(c)
		if now.Sub(wc.last) < states.PeerWatchInterval(grace, recovery, w.Interval) && !w.awaitsPeer(c) {
			continue
		}
		wc.busy, wc.last = true, now
		reads = append(reads, func() { w.read(ctx, c, wc) })
	}
	for id := range w.clusters {
		if !seen[id] {
			delete(w.clusters, id)
		}
	}
	return reads
}

// awaitsPeer reports whether a node of c waits for its own peer to come
// back (states.WakePeerBack): the watch then reads c every
// states.PeerWatchFast.
func (w *PeerWatch) awaitsPeer(c *operatorv1alpha1.GlusterCluster) bool {
	nodes, err := w.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, n := range nodes {
		if wait, ok := wake.NodeWait(n); ok && n.Spec.Cluster == c.Name && wait.WokenBy(states.WakePeerBack) {
			return true
		}
	}
	return false
}

// read reads c's lists and enqueues each of its nodes whose reading
// changed since the last read.
func (w *PeerWatch) read(ctx context.Context, c *operatorv1alpha1.GlusterCluster, wc *watchedCluster) {
	var peers []gd2.Peer
	var devices []gd2.Device
	gc, err := w.GD2.For(ctx, c)
	if err == nil {
		r := w.GD2.Refreshing(c, gc)
		if peers, err = r.ListPeers(ctx, gd2.Filter{}); err == nil {
			devices, err = r.ListAllDevices(ctx)
		}
	}
	nodes, lerr := w.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	w.mu.Lock()
	defer w.mu.Unlock()
	wc.busy = false
	if ctx.Err() != nil || lerr != nil {
		return
	}
	if err != nil && w.Log != nil {
		w.Log.Debug("peer watch: reading GD2 failed", zap.String(engine.LogNamespace, c.Namespace), zap.String(engine.LogName, c.Name), zap.Error(err))
	}
	readings := make(map[string]peerReading, len(nodes))
	for _, n := range nodes {
		if n.Spec.Cluster != c.Name {
			continue
		}
		r := readingOf(n, peers, devices, err)
		readings[n.Name] = r
		last, ok := wc.readings[n.Name]
		// A mirror that caught up is no change to decide from.
		last.unmirrored = r.unmirrored
		if !ok || last != r || r.unmirrored {
			w.Enqueue(gather.NodeKey(n.Namespace, n.Name))
		}
	}
	wc.readings = readings
}
