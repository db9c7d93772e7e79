package operator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines"
)

// Config is everything `anthill operator` takes from its flags.
type Config struct {
	// Kubeconfig is a kubeconfig path; empty means in-cluster.
	Kubeconfig string
	// MetricsAddress serves /healthz, /readyz and /metrics.
	MetricsAddress string
	// Workers is the number of dispatcher workers.
	Workers int
	// ResyncPeriod re-lists every informer this often.
	ResyncPeriod time.Duration
	// LeaderElect enables leader election on a Lease named LeaseName in
	// LeaseNamespace; identity defaults to the host name.
	LeaderElect    bool
	LeaseNamespace string
	LeaseName      string
	Identity       string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election
	// (client-go's leaderelection): the leader renews the Lease every
	// RetryPeriod, one API write each, and a standby takes over a Lease
	// not renewed for LeaseDuration. Zero takes the defaults below.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// KubeQPS and KubeBurst bound the operator's API request rate.
	KubeQPS   float32
	KubeBurst int
	// GD2Timeout bounds each GD2 request.
	GD2Timeout time.Duration
	// GD2ListInterval is how long a cluster's GD2 peer list is shared
	// between its syncs; its device and volume lists are shared
	// effects.ConfigListFactor times as long (effects.PoolViews).
	GD2ListInterval time.Duration
	// Profiling serves Go's runtime profiles on MetricsAddress under
	// /debug/pprof/.
	Profiling bool
	// HealInterval is how often a cluster's volumes are re-read.
	HealInterval time.Duration
	// LostNodeGrace is how long a Kubernetes node must have been lost
	// before a Gluster pod stuck on it is force-deleted.
	LostNodeGrace time.Duration
	// MaxWait bounds every machine's timed wait; zero keeps each
	// machine's own interval.
	MaxWait time.Duration
	// Namespaces limits the operator to the GlusterClusters of these
	// namespaces (--watch-namespace); empty means every namespace.
	Namespaces []string
}

// The leader election's defaults: a standby takes over within 15 s of the
// leader's last renewal, and the leader renews every 2 s (30 Lease writes
// a minute, the only API writes of a fleet at rest).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// RestConfig loads a kubeconfig file, or the in-cluster configuration when
// path is empty.
func RestConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config (pass --kubeconfig when running outside a cluster): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// Run runs the operator until ctx ends: it gives the Go runtime a soft
// memory limit under its container's (softMemoryLimit), serves health and
// metrics at once, starts the informers, reports ready when they have
// synced, and — as leader, when leader election is on — runs the
// dispatcher. Losing the lease ends the run with an error so the process
// restarts clean instead of acting on a stale view.
func Run(ctx context.Context, cfg Config, log *zap.Logger) error {
	setSoftMemoryLimit(log)
	rc, err := RestConfig(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	rc.UserAgent = "anthill-operator"
	// client-go's default of 5 requests per second would make a cluster of
	// dozens of nodes wait on the client rather than on the API server.
	rc.QPS, rc.Burst = cfg.KubeQPS, cfg.KubeBurst
	metrics := engine.NewMetrics()
	rc.Wrap(engine.CountKubeRequests(metrics))
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	srv, err := NewServer(cfg.MetricsAddress, metrics, log, cfg.Profiling)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.MetricsAddress, err)
	}
	log.Info("serving health and metrics", zap.String(engine.LogAddress, srv.Addr()))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var srvErr error
	wg.Go(func() {
		if err := srv.Run(ctx); err != nil {
			srvErr = err
			cancel()
		}
	})
	defer wg.Wait()

	ac, err := versioned.NewForConfig(rc)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	wired, err := machines.Wire(machines.WireConfig{
		Kube: kc, Anthill: ac, Dynamic: dyn, Resync: cfg.ResyncPeriod, Workers: cfg.Workers,
		Metrics: metrics, Log: log, GD2Timeout: cfg.GD2Timeout, PoolViewTTL: cfg.GD2ListInterval,
		Namespaces: cfg.Namespaces, HealInterval: cfg.HealInterval, MaxWait: cfg.MaxWait,
		LostNodeGrace: cfg.LostNodeGrace,
	})
	if err != nil {
		return err
	}
	defer wired.Shutdown()
	d := wired.Dispatcher
	wired.Start(ctx.Done())
	if err := d.WaitForSync(ctx); err != nil {
		return err
	}
	srv.SetReady(true)
	log.Info("informers synced")

	run := wired.Run
	if !cfg.LeaderElect {
		run(ctx)
		return errors.Join(srvErr, context.Cause(ctx))
	}
	id := cfg.Identity
	if id == "" {
		if id, err = os.Hostname(); err != nil {
			return err
		}
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.LeaseNamespace, Name: cfg.LeaseName},
		Client:     kc.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	var lost bool
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		ReleaseOnCancel: true,
		LeaseDuration:   cmp.Or(cfg.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline:   cmp.Or(cfg.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:     cmp.Or(cfg.RetryPeriod, DefaultRetryPeriod),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("leading", zap.String(engine.LogIdentity, id))
				run(ctx)
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					lost = true
				}
				cancel()
			},
		},
	})
	if lost {
		return errors.New("lost the leader lease")
	}
	return srvErr
}
