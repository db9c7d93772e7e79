package effects

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/gluster/anthill/gd2"
)

// DefaultPoolViewTTL is how long a cluster's shared peer list serves its
// syncs: the peer watch's interval at the default failure policy (half the
// offline grace of 30 s, states.PeerWatchInterval). The watch reads each
// cluster's list that often to follow liveness, so a list as young as that
// is what every other reader of the cluster (its cluster, heal, disruption
// and upgrade syncs) is served too, instead of each reading its own. The
// liveness clocks of a cluster with shorter windows are fed a younger list
// (SharedReads.maxPeerAge), which its watch keeps refreshing.
const DefaultPoolViewTTL = 15 * time.Second

// ConfigListFactor is how many times TTL a cluster's shared device and
// volume lists serve its syncs (30 s at the default). They feed no
// liveness window: they change by anthill's own calls, after which they
// are read again at once (Invalidate), or by an admin's hand or a CSI
// provisioner, which anthill sees within this longer interval.
const ConfigListFactor = 2

// PoolViews shares each cluster's GD2 peer, device and volume lists between
// the syncs of one interval: its node syncs at rest, its heal and
// disruption syncs, its capacity count. A cluster of N nodes costs one
// peers.list per TTL and one devices.list_all and one volumes.list per
// ConfigListFactor times TTL, instead of one of each per sync.
//
// A view is dropped (Invalidate) after every GD2 call anthill makes to that
// cluster that may change its configuration (GD2Clients reports them), so
// that anthill never re-reads its own write from before it. Changes made
// elsewhere (a peer dies, an admin edits a device) are seen within TTL.
//
// The shared lists only inform decisions that wait; a decision that acts
// is taken again on a live read (see node.Syncer.Gather and
// disruption.Syncer.Gather): data is never moved, a peer never deleted and
// a budget never changed on a shared list.
type PoolViews struct {
	// TTL is the peer list's; the device and volume lists' is
	// ConfigListFactor times as long. It defaults to DefaultPoolViewTTL.
	TTL   time.Duration
	Clock clock.Clock

	mu    sync.Mutex
	views map[string]*poolView
}

// poolView is one cluster's shared lists. mu is held while a read is in
// flight, so that concurrent syncs of the cluster wait for it and share
// it; gen counts invalidations, so that a read that overlapped one is not
// kept.
type poolView struct {
	mu  sync.Mutex
	gen atomic.Uint64

	peers   cachedList[gd2.Peer]
	devices cachedList[gd2.Device]
	volumes cachedList[gd2.Volume]
}

type cachedList[T any] struct {
	items []T
	at    time.Time
	gen   uint64
	ok    bool
}

func (v *PoolViews) now() time.Time {
	if v.Clock != nil {
		return v.Clock.Now()
	}
	return time.Now()
}

// Interval is how long the shared peer list serves (TTL, or its default).
func (v *PoolViews) Interval() time.Duration { return v.ttl() }

func (v *PoolViews) ttl() time.Duration {
	if v.TTL > 0 {
		return v.TTL
	}
	return DefaultPoolViewTTL
}

func (v *PoolViews) view(cluster string) *poolView {
	v.mu.Lock()
	defer v.mu.Unlock()
	pv, ok := v.views[cluster]
	if !ok {
		if v.views == nil {
			v.views = map[string]*poolView{}
		}
		pv = &poolView{}
		v.views[cluster] = pv
	}
	return pv
}

// Invalidate drops cluster's shared lists: the next read is live.
func (v *PoolViews) Invalidate(cluster string) {
	v.mu.Lock()
	pv, ok := v.views[cluster]
	v.mu.Unlock()
	if ok {
		pv.gen.Add(1)
	}
}

// Forget drops everything kept for a deleted cluster.
func (v *PoolViews) Forget(cluster string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if pv, ok := v.views[cluster]; ok {
		pv.gen.Add(1)
		delete(v.views, cluster)
	}
}

// shared returns the list l holds if it is younger than ttl, else reads
// it with read and keeps it unless an invalidation overlapped the read.
// Errors are never kept. The caller gets its own slice (the elements' maps
// are shared and must not be written).
func shared[T any](v *PoolViews, pv *poolView, l *cachedList[T], ttl time.Duration, read func() ([]T, error)) ([]T, error) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	gen := pv.gen.Load()
	if l.ok && l.gen == gen && v.now().Sub(l.at) < ttl {
		return slices.Clone(l.items), nil
	}
	items, err := read()
	if err != nil {
		return nil, err
	}
	if pv.gen.Load() == gen {
		*l = cachedList[T]{items: items, at: v.now(), gen: gen, ok: true}
	}
	return slices.Clone(items), nil
}

// Reads returns gc's reads with the unfiltered peer and volume lists and
// the device list shared through v for cluster (namespace/name). A
// positive maxPeerAge bounds the age of the peer list these reads are
// served below TTL (a cluster whose liveness windows are shorter than
// TTL, see states.LivenessListAge); other reads of the same view keep
// theirs.
func (v *PoolViews) Reads(cluster string, gc *gd2.Client, maxPeerAge time.Duration) *SharedReads {
	return &SharedReads{Client: gc, views: v, cluster: cluster, maxPeerAge: maxPeerAge}
}

// Refresh returns gc's reads for cluster like Reads, except that the peer
// list is always read from GD2 and the read kept as the view's: the peer
// watch's reads, which keep every other reader's list young without a
// read of their own. (A watch served a cached list would see a change up
// to that list's age late, and as often as not two intervals after it.)
func (v *PoolViews) Refresh(cluster string, gc *gd2.Client) *SharedReads {
	return &SharedReads{Client: gc, views: v, cluster: cluster, refresh: true}
}

// SharedReads is a cluster's GD2 client whose ListPeers and ListVolumes
// (unfiltered) and ListAllDevices come from the cluster's shared view;
// every other call goes to GD2.
type SharedReads struct {
	*gd2.Client
	views      *PoolViews
	cluster    string
	maxPeerAge time.Duration
	// refresh: the peer list is read live and kept (Refresh).
	refresh bool
}

// peerTTL is the age up to which r is served a shared peer list.
func (r *SharedReads) peerTTL() time.Duration {
	if r.refresh {
		return 0
	}
	if ttl := r.views.ttl(); r.maxPeerAge <= 0 || r.maxPeerAge >= ttl {
		return ttl
	}
	return r.maxPeerAge
}

// ListPeers serves an unfiltered list from the shared view; a filtered one
// is read from GD2.
func (r *SharedReads) ListPeers(ctx context.Context, f gd2.Filter) ([]gd2.Peer, error) {
	if f != (gd2.Filter{}) {
		return r.Client.ListPeers(ctx, f)
	}
	pv := r.views.view(r.cluster)
	return shared(r.views, pv, &pv.peers, r.peerTTL(), func() ([]gd2.Peer, error) { return r.Client.ListPeers(ctx, f) })
}

// ListAllDevices serves the device list from the shared view.
func (r *SharedReads) ListAllDevices(ctx context.Context) ([]gd2.Device, error) {
	pv := r.views.view(r.cluster)
	return shared(r.views, pv, &pv.devices, ConfigListFactor*r.views.ttl(), func() ([]gd2.Device, error) { return r.Client.ListAllDevices(ctx) })
}

// ListVolumes serves an unfiltered list from the shared view; a filtered
// one is read from GD2.
func (r *SharedReads) ListVolumes(ctx context.Context, f gd2.Filter) ([]gd2.Volume, error) {
	if f != (gd2.Filter{}) {
		return r.Client.ListVolumes(ctx, f)
	}
	pv := r.views.view(r.cluster)
	return shared(r.views, pv, &pv.volumes, ConfigListFactor*r.views.ttl(), func() ([]gd2.Volume, error) { return r.Client.ListVolumes(ctx, f) })
}

// readOnly are the GD2 operations that change nothing; every other one
// (and any the client adds later) invalidates its cluster's view.
var readOnly = map[gd2.Operation]bool{
	gd2.OpPing: true, gd2.OpVersion: true, gd2.OpEndpoints: true,
	gd2.OpPeersList: true, gd2.OpPeersGet: true,
	gd2.OpVolumesList: true, gd2.OpVolumesGet: true, gd2.OpVolumesStatus: true, gd2.OpVolumesBricksStatus: true, gd2.OpVolumesOptionsGet: true,
	gd2.OpHealInfo: true, gd2.OpRebalanceStatus: true,
	gd2.OpDevicesList: true, gd2.OpDevicesListAll: true, gd2.OpDevicesGet: true,
	gd2.OpClusterOptionsGet: true,
}

// changesConfig reports whether op may change a cluster's configuration.
func changesConfig(op gd2.Operation) bool { return !readOnly[op] }
