package machines

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/cluster"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/node"
	"github.com/gluster/anthill/states"
)

// LiveReads are the clients a live decision reads through: an admin's
// (kubectl's configuration), never the operator's. Nothing is written
// through them.
type LiveReads struct {
	Kube    kubernetes.Interface
	Anthill versioned.Interface
	// GD2Timeout bounds each GD2 request; 0 is the client's default.
	GD2Timeout time.Duration
	// SyncTimeout bounds the initial list of the objects the decision
	// reads; 0 is DefaultLiveSyncTimeout.
	SyncTimeout time.Duration
	// Clock is "now" for the decision; nil is the real clock.
	Clock clock.Clock
	// Dynamic reads a cluster's VolumeSnapshotClass; nil reads only
	// whether the snapshot API is served.
	Dynamic dynamic.Interface
}

// DefaultLiveSyncTimeout bounds the lists of a live decision.
const DefaultLiveSyncTimeout = 30 * time.Second

// GD2 sides of a live decision.
const (
	// LiveGD2Read: GD2 answered and the decision used what it said.
	LiveGD2Read = "read"
	// LiveGD2NotNeeded: the decision in this state does not depend on GD2.
	LiveGD2NotNeeded = "notNeeded"
	// LiveGD2Unavailable: the decision needs GD2 and it could not be read
	// from here (GD2Error says why): the decision is not known.
	LiveGD2Unavailable = "unavailable"
)

// LiveDecision is the decision one machine's sync would take now, from
// facts gathered now by the operator's own gather code and decided by the
// same pure function (states.DecideNode, states.DecideCluster), with
// nothing acted on and nothing written.
type LiveDecision struct {
	Machine string
	// State is the persisted state the decision was taken in.
	State fsm.State
	// Decision is the machine's decision; meaningful only when Known.
	Decision states.Decision
	// To is where the decision leads: the event's target, else State.
	To fsm.State
	// GD2 is how GD2 was read (LiveGD2Read, LiveGD2NotNeeded,
	// LiveGD2Unavailable), and GD2Error why it could not be.
	GD2      string
	GD2Error error
	// Refused says why the operator's runner would refuse the decision.
	Refused string
}

// Known reports whether the decision stands: GD2 was read, or the decision
// does not need it. An unknown decision must not be shown as the
// operator's: it was taken without facts the operator has.
func (d LiveDecision) Known() bool { return d.GD2 != LiveGD2Unavailable }

// LiveNodeDecision gathers GlusterNode ns/name's facts the way its sync
// does and returns its decision. An error means the Kubernetes objects the
// decision reads could not be read.
func LiveNodeDecision(ctx context.Context, r LiveReads, ns, name string) (LiveDecision, error) {
	fs, err := newFactories(r.Kube, r.Anthill, 0, ns)
	if err != nil {
		return LiveDecision{}, err
	}
	v1 := fs.anthill.Operator().V1alpha1()
	nodes, clusters := v1.GlusterNodes(), v1.GlusterClusters()
	pods, pvcs := fs.managed.Core().V1().Pods(), fs.managed.Core().V1().PersistentVolumeClaims()
	if err := r.syncInformers(ctx, map[string]cache.SharedIndexInformer{
		"GlusterNodes": nodes.Informer(), "GlusterClusters": clusters.Informer(),
		"Pods": pods.Informer(), "PersistentVolumeClaims": pvcs.Informer(),
	}, fs); err != nil {
		return LiveDecision{}, err
	}
	n, err := nodes.Lister().GlusterNodes(ns).Get(name)
	if err != nil {
		return LiveDecision{}, err
	}
	s := &node.Syncer{
		Nodes: nodes.Lister(), Clusters: clusters.Lister(), Pods: pods.Lister(), PVCs: pvcs.Lister(),
		GD2: r.gd2(), Log: liveLog(), Clock: r.clock(), Live: r.Kube,
	}
	p, out, err := decideLive(ctx, s, n.DeepCopy(), states.NodeMachine)
	if err != nil {
		return LiveDecision{}, err
	}
	if !unGathered(p.Refused, p.Decision) {
		out.setGD2(s.LiveGD2(p.Facts))
	}
	return out, nil
}

// LiveClusterDecision gathers GlusterCluster ns/name's facts the way the
// cluster machine's sync does and returns its decision.
func LiveClusterDecision(ctx context.Context, r LiveReads, ns, name string) (LiveDecision, error) {
	fs, err := newFactories(r.Kube, r.Anthill, 0, ns)
	if err != nil {
		return LiveDecision{}, err
	}
	v1 := fs.anthill.Operator().V1alpha1()
	nodes, clusters := v1.GlusterNodes(), v1.GlusterClusters()
	core, apps := fs.managed.Core().V1(), fs.managed.Apps().V1()
	secrets, services, sts, eps := core.Secrets(), core.Services(), apps.StatefulSets(), fs.managed.Discovery().V1().EndpointSlices()
	pvs := fs.all.Core().V1().PersistentVolumes()
	pvIndex, err := gather.IndexUses(pvs.Informer(), gather.PVUses)
	if err != nil {
		return LiveDecision{}, err
	}
	csi := csiInformers(fs.managed, fs.all)
	if err := r.syncInformers(ctx, map[string]cache.SharedIndexInformer{
		"GlusterNodes": nodes.Informer(), "GlusterClusters": clusters.Informer(),
		"Secrets": secrets.Informer(), "Services": services.Informer(), "StatefulSets": sts.Informer(),
		"EndpointSlices": eps.Informer(), "PersistentVolumes": pvs.Informer(),
		"ServiceAccounts": csi.serviceAccounts.Informer(), "DaemonSets": csi.daemonSets.Informer(),
		"Deployments": csi.deployments.Informer(), "CSIDrivers": csi.drivers.Informer(),
		"ClusterRoles": csi.clusterRoles.Informer(), "ClusterRoleBindings": csi.clusterRoleBindings.Informer(),
		"StorageClasses": csi.storageClasses.Informer(),
	}, fs); err != nil {
		return LiveDecision{}, err
	}
	c, err := clusters.Lister().GlusterClusters(ns).Get(name)
	if err != nil {
		return LiveDecision{}, err
	}
	s := &cluster.Syncer{
		Clusters: clusters.Lister(), Nodes: nodes.Lister(), Secrets: secrets.Lister(), Services: services.Lister(),
		StatefulSets: sts.Lister(), PVs: pvIndex, CSI: csi.listers(), EndpointSlices: eps.Lister(),
		// Anthill reads the cluster and its GlusterNodes live when the
		// decision scales (GatherLive); nothing here writes.
		Anthill: r.Anthill, GD2: r.gd2(), Log: liveLog(), Clock: r.clock(),
		TLS:       &effects.TLS{Client: r.Kube, Anthill: r.Anthill, Now: r.clock().Now},
		Snapshots: &effects.SnapshotAPI{Discovery: r.Kube.Discovery(), Dynamic: r.Dynamic},
	}
	p, out, err := decideLive(ctx, s, c.DeepCopy(), states.ClusterMachine)
	if err != nil {
		return LiveDecision{}, err
	}
	if !unGathered(p.Refused, p.Decision) {
		out.setGD2(s.LiveGD2(p.State, p.Facts))
	}
	return out, nil
}

// unGathered: the runner refuses the object before gathering (an unknown
// state, a status a newer operator wrote); the refusal is the answer.
func unGathered(refused string, d states.Decision) bool {
	return refused != "" && reflect.DeepEqual(d, states.Decision{})
}

// decideLive previews o's one instance of machine (engine.Decide) and
// returns it with its LiveDecision, whose GD2 side the caller fills in.
func decideLive[O engine.Object, F any](ctx context.Context, spec engine.MachineSyncer[O, F], o O, machine string) (engine.Preview[F], LiveDecision, error) {
	ps, err := engine.Decide(ctx, spec, o)
	if err != nil {
		return engine.Preview[F]{}, LiveDecision{}, err
	}
	p := ps[0]
	return p, LiveDecision{Machine: machine, State: p.State, Decision: p.Decision, To: p.To, Refused: p.Refused}, nil
}

// gd2Unavailable marks d as taken without the GD2 reads it needs, for
// err (nil: they were not made).
func (d *LiveDecision) gd2Unavailable(err error) {
	if err == nil {
		err = errors.New("GD2 was not read")
	}
	d.GD2, d.GD2Error = LiveGD2Unavailable, err
}

// setGD2 sets how GD2 was read from what the machine's facts show: whether
// its decision depends on GD2 answering (needed), whether GD2 answered
// (read), and why not (err).
func (d *LiveDecision) setGD2(needed, read bool, err error) {
	switch {
	case read:
		d.GD2 = LiveGD2Read
	case !needed:
		d.GD2 = LiveGD2NotNeeded
	default:
		d.gd2Unavailable(err)
	}
}

func (r LiveReads) clock() clock.Clock {
	if r.Clock == nil {
		return clock.RealClock{}
	}
	return r.Clock
}

// gd2 reaches GD2 as the operator does (the cluster's management endpoint
// and auth secret), reading the secret live with the admin's credentials.
func (r LiveReads) gd2() *effects.GD2Clients {
	return &effects.GD2Clients{Secrets: r.Kube.CoreV1(), Timeout: r.GD2Timeout}
}

// liveLog is the transition log of a live decision: it logs nothing and
// records no Event (a gather may warn, the operator's sync says it).
func liveLog() *engine.TransitionLog { return &engine.TransitionLog{Log: zap.NewNop()} }

// syncInformers starts the informers and waits until each has listed its
// objects, or one failed to list them (say, the admin may not list
// Secrets): a decision from a partial read would be a guess.
func (r LiveReads) syncInformers(ctx context.Context, infs map[string]cache.SharedIndexInformer, fs factories) error {
	timeout := r.SyncTimeout
	if timeout == 0 {
		timeout = DefaultLiveSyncTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var mu sync.Mutex
	var failed error
	for kind, inf := range infs {
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			mu.Lock()
			defer mu.Unlock()
			if failed == nil {
				failed = fmt.Errorf("list %s: %w", kind, err)
			}
			cancel()
		}); err != nil {
			return err
		}
	}
	fs.managed.Start(ctx.Done())
	fs.all.Start(ctx.Done())
	fs.anthill.Start(ctx.Done())
	defer func() {
		cancel()
		fs.managed.Shutdown()
		fs.all.Shutdown()
		fs.anthill.Shutdown()
	}()
	// Polled rather than cache.WaitForCacheSync, which logs: this runs
	// in an admin's command.
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, inf := range infs {
			if !inf.HasSynced() {
				return false, nil
			}
		}
		return true, nil
	})
	if err == nil {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	if failed != nil {
		return failed
	}
	return fmt.Errorf("listing the objects the decision reads did not finish within %s", timeout)
}
