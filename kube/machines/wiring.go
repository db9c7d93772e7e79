package machines

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/kube/client/clientset/versioned"
	anthillscheme "github.com/gluster/anthill/kube/client/clientset/versioned/scheme"
	anthillinformers "github.com/gluster/anthill/kube/client/informers/externalversions"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// Machines is everything the dispatcher needs to run anthill's machines,
// assembled by Wire.
type Machines struct {
	Dispatcher *engine.Dispatcher
	// PeerWatch follows GD2 liveness for the node machine; it runs with
	// the dispatcher (Run).
	PeerWatch *PeerWatch
	factories []interface {
		Start(stop <-chan struct{})
		Shutdown()
	}
	broadcast record.EventBroadcaster
}

// Start starts the informers (the dispatcher is started separately, by the
// leader).
func (m *Machines) Start(stop <-chan struct{}) {
	for _, f := range m.factories {
		f.Start(stop)
	}
}

// Run runs the dispatcher and the peer watch until ctx ends (the leader
// runs it; the informers run on every replica, see Start).
func (m *Machines) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if m.PeerWatch != nil {
		wg.Go(func() { m.PeerWatch.Run(ctx) })
	}
	m.Dispatcher.Run(ctx)
	wg.Wait()
}

// Shutdown stops the informers and the Event broadcaster.
func (m *Machines) Shutdown() {
	for _, f := range m.factories {
		f.Shutdown()
	}
	m.broadcast.Shutdown()
}

// WireConfig is what Wire needs from the process.
type WireConfig struct {
	Kube       kubernetes.Interface
	Anthill    versioned.Interface
	Resync     time.Duration
	Workers    int
	Metrics    *engine.Metrics
	Log        *zap.Logger
	Clock      clock.Clock
	GD2Timeout time.Duration
	// PoolViewTTL is how long a cluster's GD2 peer list is shared between
	// its syncs (its device and volume lists effects.ConfigListFactor
	// times as long); 0 is effects.DefaultPoolViewTTL.
	PoolViewTTL time.Duration
}

// factories are the informer factories the syncers' listers come from.
type factories struct {
	// managed watches only objects anthill labels (managed-by=anthill);
	// all watches every object (PersistentVolumes, StorageClasses);
	// anthill watches the custom resources.
	managed, all informers.SharedInformerFactory
	anthill      anthillinformers.SharedInformerFactory
}

// newFactories builds the factories of the operator (namespace
// metav1.NamespaceAll) and of a live decision (one namespace; the
// cluster-scoped kinds are read whole either way).
func newFactories(kube kubernetes.Interface, anthill versioned.Interface, resync time.Duration, namespace string) (factories, error) {
	managed, err := labels.NewRequirement(objects.LabelManagedBy, selection.Equals, []string{objects.ManagedByAnthill})
	if err != nil {
		return factories{}, err
	}
	return factories{
		managed: informers.NewSharedInformerFactoryWithOptions(kube, resync, informers.WithNamespace(namespace), informers.WithTransform(objects.TrimForCache),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = labels.NewSelector().Add(*managed).String() })),
		// Every PersistentVolume: one a cluster's CSI driver provisioned
		// carries no anthill label, only the driver's name (see
		// usesCluster). Every StorageClass too: one of a name a cluster
		// wants is a clash even without anthill's labels (see
		// csiListers.StorageClasses).
		all:     informers.NewSharedInformerFactoryWithOptions(kube, resync, informers.WithNamespace(namespace), informers.WithTransform(objects.TrimForCache)),
		anthill: anthillinformers.NewSharedInformerFactoryWithOptions(anthill, resync, anthillinformers.WithNamespace(namespace), anthillinformers.WithTransform(objects.TrimForCache)),
	}, nil
}

// Wire builds the informers, listers, syncers and the dispatcher. Only
// objects anthill labels are watched (managed-by=anthill), except the
// custom resources and PersistentVolumes (all of them). Every informer
// stores its objects without managedFields (objects.TrimForCache).
func Wire(cfg WireConfig) (*Machines, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	fs, err := newFactories(cfg.Kube, cfg.Anthill, cfg.Resync, metav1.NamespaceAll)
	if err != nil {
		return nil, err
	}
	kf, pvf, af := fs.managed, fs.all, fs.anthill

	if err := anthillscheme.AddToScheme(scheme.Scheme); err != nil {
		return nil, fmt.Errorf("register anthill types for Events: %w", err)
	}
	bc := record.NewBroadcaster()
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cfg.Kube.CoreV1().Events("")})
	recorder := bc.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "anthill"})
	host, _ := os.Hostname()
	tlog := &engine.TransitionLog{Log: cfg.Log, Metrics: cfg.Metrics, Recorder: recorder, Events: &engine.TransitionEvents{
		Client: cfg.Kube.CoreV1(), Scheme: scheme.Scheme, Clock: cfg.Clock, Host: host, Metrics: cfg.Metrics, Log: cfg.Log,
	}}

	d, err := engine.NewDispatcher(engine.DispatcherConfig{Workers: cfg.Workers, Metrics: cfg.Metrics, Log: cfg.Log})
	if err != nil {
		return nil, err
	}
	nodes := af.Operator().V1alpha1().GlusterNodes()
	clusters := af.Operator().V1alpha1().GlusterClusters()
	pods := kf.Core().V1().Pods()
	pvcs := kf.Core().V1().PersistentVolumeClaims()
	secrets := kf.Core().V1().Secrets()
	services := kf.Core().V1().Services()
	sts := kf.Apps().V1().StatefulSets()
	daemonSets := kf.Apps().V1().DaemonSets()
	eps := kf.Discovery().V1().EndpointSlices()
	pvs := pvf.Core().V1().PersistentVolumes()
	csi := csiInformers(kf, pvf)

	pvIndex, err := indexUses(pvs.Informer(), pvUses)
	if err != nil {
		return nil, err
	}
	clusterIndex, err := indexUses(clusters.Informer(), clusterUses)
	if err != nil {
		return nil, err
	}
	km := keyMapper{nodes: nodes.Lister(), clusters: clusters.Lister(), byUse: clusterIndex}
	for _, w := range []struct {
		inf interface {
			Informer() cache.SharedIndexInformer
		}
		keys func(any) []engine.Key
	}{
		{clusters, km.forCluster}, {nodes, km.forNode}, {pods, km.forLabelled}, {pvcs, km.forLabelled},
		{secrets, km.forLabelled}, {services, km.forLabelled}, {sts, km.forLabelled}, {daemonSets, km.forLabelled}, {pvs, km.forPV}, {eps, km.forLabelled},
		{csi.serviceAccounts, km.forLabelled}, {csi.deployments, km.forLabelled},
		{csi.drivers, km.forClusterScoped}, {csi.clusterRoles, km.forClusterScoped}, {csi.clusterRoleBindings, km.forClusterScoped},
		{csi.storageClasses, km.forStorageClass},
	} {
		if err := d.Watch(w.inf.Informer(), w.keys); err != nil {
			return nil, err
		}
	}
	// The disruption machine: PodDisruptionBudgets anthill labels, and
	// every Kubernetes Node (cordons and taints ask for a zone to open).
	pdbs := kf.Policy().V1().PodDisruptionBudgets()
	nf := informers.NewSharedInformerFactoryWithOptions(cfg.Kube, cfg.Resync, informers.WithTransform(objects.TrimForCache))
	kubeNodes := nf.Core().V1().Nodes()
	for _, inf := range []cache.SharedIndexInformer{clusters.Informer(), nodes.Informer(), pods.Informer(), pdbs.Informer()} {
		if err := d.Watch(inf, disruptionKeys); err != nil {
			return nil, err
		}
	}
	if err := d.WatchChanges(kubeNodes.Informer(), schedulingChanged, nodeDrainKeys(pods.Lister())); err != nil {
		return nil, err
	}
	// Syncs read Secrets from watches: anthill's own from the labelled
	// informer, an admin's each by its name (effects.SecretCache).
	secretCache := &effects.SecretCache{Kube: cfg.Kube, Labelled: secrets.Lister(), Clock: cfg.Clock}
	gd2c := &effects.GD2Clients{
		Secrets: cfg.Kube.CoreV1(), Cache: secretCache, Views: &effects.PoolViews{TTL: cfg.PoolViewTTL, Clock: cfg.Clock},
		Metrics: cfg.Metrics, Timeout: cfg.GD2Timeout, Log: cfg.Log,
	}
	tlsIssuer := &effects.TLS{Client: cfg.Kube, Anthill: cfg.Anthill, Now: cfg.Clock.Now, Cache: secretCache}
	kops := &effects.Kube{Client: cfg.Kube, Anthill: cfg.Anthill, TLS: tlsIssuer}
	audit := effects.Audit{Log: cfg.Log}
	watch := &PeerWatch{
		Clusters: clusters.Lister(), Nodes: nodes.Lister(), GD2: gd2c, Enqueue: d.Enqueue,
		Interval: gd2c.Views.Interval(), Clock: cfg.Clock, Log: cfg.Log,
	}
	d.Register(states.NodeMachine, &NodeSyncer{
		Nodes: nodes.Lister(), Clusters: clusters.Lister(), Pods: pods.Lister(), PVCs: pvcs.Lister(),
		Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Live: cfg.Kube, Audit: audit,
		PeerWatched: true,
	})
	d.Register(states.ClusterMachine, &ClusterSyncer{
		Clusters: clusters.Lister(), Nodes: nodes.Lister(), Secrets: secrets.Lister(), Services: services.Lister(),
		StatefulSets: sts.Lister(), PVs: pvIndex, CSI: csi.listers(), Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock,
		EndpointSlices: eps.Lister(), TLS: tlsIssuer, Audit: audit,
	})
	d.Register(states.UpgradeMachine, &UpgradeSyncer{
		Clusters: clusters.Lister(), Nodes: nodes.Lister(), CSI: effects.CSIReader{DaemonSets: daemonSets.Lister(), Deployments: csi.deployments.Lister(), Pods: pods.Lister(), Pinned: kops.PinnedNodes},
		Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Audit: audit,
	})
	var volumeMetrics *VolumeMetrics
	if cfg.Metrics != nil {
		volumeMetrics = NewVolumeMetrics()
		if err := cfg.Metrics.Registry.Register(volumeMetrics); err != nil {
			return nil, fmt.Errorf("register the volume metrics: %w", err)
		}
	}
	d.Register(states.HealMachine, &HealSyncer{
		Clusters: clusters.Lister(), Anthill: cfg.Anthill, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Audit: audit,
		Volumes: volumeMetrics,
	})
	d.Register(states.DisruptionMachine, &DisruptionSyncer{
		Clusters: clusters.Lister(), Nodes: nodes.Lister(), KubeNodes: kubeNodes.Lister(), Client: cfg.Kube,
		Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Audit: audit,
	})
	if cfg.Metrics != nil {
		sc := NewStateCollector(nodes.Lister(), clusters.Lister())
		sc.Pods = pods.Lister()
		if err := cfg.Metrics.Registry.Register(sc); err != nil {
			return nil, fmt.Errorf("register the state metrics: %w", err)
		}
	}
	m := &Machines{Dispatcher: d, PeerWatch: watch, broadcast: bc}
	m.factories = append(m.factories, kf, pvf, af, nf, secretCache)
	return m, nil
}
