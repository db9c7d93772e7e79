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
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	appsv1informers "k8s.io/client-go/informers/apps/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	discoveryv1informers "k8s.io/client-go/informers/discovery/v1"
	policyv1informers "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/kube/client/clientset/versioned"
	anthillscheme "github.com/gluster/anthill/kube/client/clientset/versioned/scheme"
	anthillinformers "github.com/gluster/anthill/kube/client/informers/externalversions"
	anthillv1alpha1informers "github.com/gluster/anthill/kube/client/informers/externalversions/operator/v1alpha1"
	anthilllisters "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/cluster"
	"github.com/gluster/anthill/kube/machines/disruption"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/heal"
	"github.com/gluster/anthill/kube/machines/node"
	"github.com/gluster/anthill/kube/machines/upgrade"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// Machines is everything the dispatcher needs to run anthill's machines,
// assembled by Wire.
type Machines struct {
	Dispatcher *engine.Dispatcher
	// PeerWatch follows GD2 liveness for the node machine; it runs with
	// the dispatcher (Run).
	PeerWatch *node.PeerWatch
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
	// Namespaces are the namespaces whose clusters the operator runs
	// (--watch-namespace); empty means every namespace. Cluster-scoped
	// kinds (PersistentVolumes, StorageClasses, CSI drivers and their
	// cluster roles, Kubernetes Nodes) are watched whole either way.
	Namespaces []string
	// HealInterval is how often a cluster's volumes are re-read; 0 is
	// heal.DefaultHealInterval.
	HealInterval time.Duration
	// LostNodeGrace is how long a Kubernetes node must have been lost
	// before a Gluster pod stuck on it is force-deleted; 0 is
	// node.DefaultLostNodeGrace.
	LostNodeGrace time.Duration
	// MaxWait bounds every machine's timed wait (engine.DispatcherConfig);
	// 0 keeps each machine's own.
	MaxWait time.Duration
	// Dynamic reads and writes the snapshot API (VolumeSnapshotClasses of
	// clusters with spec.csi.snapshots); nil leaves them alone.
	Dynamic dynamic.Interface
}

// factories are the informer factories the syncers' listers come from.
type factories struct {
	// managed watches only objects anthill labels (managed-by=anthill);
	// all watches every object (PersistentVolumes, StorageClasses);
	// anthill watches the custom resources.
	managed, all informers.SharedInformerFactory
	anthill      anthillinformers.SharedInformerFactory
	// namespace is the one namespace the factories watch, or
	// metav1.NamespaceAll.
	namespace string
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
		// gather.UsesCluster). Every StorageClass too: one of a name a cluster
		// wants is a clash even without anthill's labels (see
		// cluster.CSIListers.StorageClasses).
		all:       informers.NewSharedInformerFactoryWithOptions(kube, resync, informers.WithNamespace(namespace), informers.WithTransform(objects.TrimForCache)),
		anthill:   anthillinformers.NewSharedInformerFactoryWithOptions(anthill, resync, anthillinformers.WithNamespace(namespace), anthillinformers.WithTransform(objects.TrimForCache)),
		namespace: namespace,
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
	if err := ValidateWatchNamespaces(cfg.Namespaces); err != nil {
		return nil, err
	}
	// everything watches the cluster-scoped kinds, and every namespace's
	// objects unless cfg.Namespaces names some (watched: one factory set
	// per namespace, see watched_namespaces.go).
	everything, err := newFactories(cfg.Kube, cfg.Anthill, cfg.Resync, metav1.NamespaceAll)
	if err != nil {
		return nil, err
	}
	watched, err := watchedFactories(everything, cfg.Namespaces, func(ns string) (factories, error) {
		return newFactories(cfg.Kube, cfg.Anthill, cfg.Resync, ns)
	})
	if err != nil {
		return nil, err
	}
	kf, pvf := everything.managed, everything.all

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

	d, err := engine.NewDispatcher(engine.DispatcherConfig{Workers: cfg.Workers, Metrics: cfg.Metrics, Log: cfg.Log, MaxWait: cfg.MaxWait})
	if err != nil {
		return nil, err
	}
	nodes := spreadOver(watched, func(f factories) anthillv1alpha1informers.GlusterNodeInformer {
		return f.anthill.Operator().V1alpha1().GlusterNodes()
	})
	clusters := spreadOver(watched, func(f factories) anthillv1alpha1informers.GlusterClusterInformer {
		return f.anthill.Operator().V1alpha1().GlusterClusters()
	})
	pods := spreadOver(watched, func(f factories) corev1informers.PodInformer { return f.managed.Core().V1().Pods() })
	pvcs := spreadOver(watched, func(f factories) corev1informers.PersistentVolumeClaimInformer {
		return f.managed.Core().V1().PersistentVolumeClaims()
	})
	secrets := spreadOver(watched, func(f factories) corev1informers.SecretInformer { return f.managed.Core().V1().Secrets() })
	services := spreadOver(watched, func(f factories) corev1informers.ServiceInformer { return f.managed.Core().V1().Services() })
	sts := spreadOver(watched, func(f factories) appsv1informers.StatefulSetInformer { return f.managed.Apps().V1().StatefulSets() })
	daemonSets := spreadOver(watched, func(f factories) appsv1informers.DaemonSetInformer { return f.managed.Apps().V1().DaemonSets() })
	eps := spreadOver(watched, func(f factories) discoveryv1informers.EndpointSliceInformer {
		return f.managed.Discovery().V1().EndpointSlices()
	})
	serviceAccounts := spreadOver(watched, func(f factories) corev1informers.ServiceAccountInformer {
		return f.managed.Core().V1().ServiceAccounts()
	})
	deployments := spreadOver(watched, func(f factories) appsv1informers.DeploymentInformer { return f.managed.Apps().V1().Deployments() })
	pvs := pvf.Core().V1().PersistentVolumes()
	// The CSI driver's cluster-scoped objects, and every StorageClass.
	csi := csiInformerSet{
		drivers: kf.Storage().V1().CSIDrivers(), clusterRoles: kf.Rbac().V1().ClusterRoles(),
		clusterRoleBindings: kf.Rbac().V1().ClusterRoleBindings(), storageClasses: pvf.Storage().V1().StorageClasses(),
	}
	csiL := cluster.CSIListers{
		ServiceAccounts: corev1listers.NewServiceAccountLister(serviceAccounts.indexer),
		DaemonSets:      appsv1listers.NewDaemonSetLister(daemonSets.indexer),
		Deployments:     appsv1listers.NewDeploymentLister(deployments.indexer),
		CSIDrivers:      csi.drivers.Lister(), ClusterRoles: csi.clusterRoles.Lister(), ClusterRoleBindings: csi.clusterRoleBindings.Lister(),
		StorageClasses: csi.storageClasses.Lister(),
	}
	nodeLister := anthilllisters.NewGlusterNodeLister(nodes.indexer)
	clusterLister := anthilllisters.NewGlusterClusterLister(clusters.indexer)
	podLister := corev1listers.NewPodLister(pods.indexer)

	pvIndex, err := gather.IndexUses(pvs.Informer(), gather.PVUses)
	if err != nil {
		return nil, err
	}
	if err := clusters.addIndexers(cache.Indexers{gather.UsesIndex: gather.ClusterUses}); err != nil {
		return nil, err
	}
	clusterIndex := clusters.indexer
	km := keyMapper{nodes: nodeLister, clusters: clusterLister, byUse: clusterIndex}
	for _, w := range []struct {
		informers []cache.SharedIndexInformer
		keys      func(any) []engine.Key
	}{
		{pods.informers, km.forLabelled}, {pvcs.informers, km.forLabelled},
		{secrets.informers, km.forLabelled}, {services.informers, km.forLabelled}, {sts.informers, km.forLabelled},
		{daemonSets.informers, km.forLabelled}, {[]cache.SharedIndexInformer{pvs.Informer()}, km.forPV}, {eps.informers, km.forLabelled},
		{serviceAccounts.informers, km.forLabelled}, {deployments.informers, km.forLabelled},
		{[]cache.SharedIndexInformer{csi.drivers.Informer()}, km.forClusterScoped},
		{[]cache.SharedIndexInformer{csi.clusterRoles.Informer()}, km.forClusterScoped},
		{[]cache.SharedIndexInformer{csi.clusterRoleBindings.Informer()}, km.forClusterScoped},
		{[]cache.SharedIndexInformer{csi.storageClasses.Informer()}, km.forStorageClass},
	} {
		for _, inf := range w.informers {
			if err := d.Watch(inf, w.keys); err != nil {
				return nil, err
			}
		}
	}
	for _, infs := range []struct {
		informers []cache.SharedIndexInformer
		keys      func(oldObj, newObj any) []engine.Key
	}{{clusters.informers, km.forClusterUpdate}, {nodes.informers, km.forNodeUpdate}} {
		for _, inf := range infs.informers {
			if err := d.WatchUpdates(inf, infs.keys); err != nil {
				return nil, err
			}
		}
	}
	// The disruption machine: PodDisruptionBudgets anthill labels, and
	// every Kubernetes Node (cordons and taints ask for a zone to open).
	pdbs := spreadOver(watched, func(f factories) policyv1informers.PodDisruptionBudgetInformer {
		return f.managed.Policy().V1().PodDisruptionBudgets()
	})
	nf := informers.NewSharedInformerFactoryWithOptions(cfg.Kube, cfg.Resync, informers.WithTransform(objects.TrimForCache))
	kubeNodes := nf.Core().V1().Nodes()
	for _, infs := range [][]cache.SharedIndexInformer{clusters.informers, nodes.informers, pods.informers, pdbs.informers} {
		for _, inf := range infs {
			if err := d.WatchUpdates(inf, disruption.UpdateKeys); err != nil {
				return nil, err
			}
		}
	}
	if err := d.WatchChanges(kubeNodes.Informer(), disruption.SchedulingChanged, disruption.NodeDrainKeys(podLister)); err != nil {
		return nil, err
	}
	// Syncs read Secrets from watches: anthill's own from the labelled
	// informer, an admin's each by its name (effects.SecretCache).
	secretCache := &effects.SecretCache{Kube: cfg.Kube, Labelled: corev1listers.NewSecretLister(secrets.indexer), Clock: cfg.Clock}
	gd2c := &effects.GD2Clients{
		Secrets: cfg.Kube.CoreV1(), Cache: secretCache, Views: &effects.PoolViews{TTL: cfg.PoolViewTTL, Clock: cfg.Clock},
		Metrics: cfg.Metrics, Timeout: cfg.GD2Timeout, Log: cfg.Log,
	}
	tlsIssuer := &effects.TLS{Client: cfg.Kube, Anthill: cfg.Anthill, Now: cfg.Clock.Now, Cache: secretCache}
	var snapshots *effects.SnapshotAPI
	if cfg.Dynamic != nil {
		snapshots = &effects.SnapshotAPI{Discovery: cfg.Kube.Discovery(), Dynamic: cfg.Dynamic}
	}
	kops := &effects.Kube{Client: cfg.Kube, Anthill: cfg.Anthill, TLS: tlsIssuer, Snapshots: snapshots}
	audit := effects.Audit{Log: cfg.Log}
	watch := &node.PeerWatch{
		Clusters: clusterLister, Nodes: nodeLister, GD2: gd2c, Enqueue: d.Enqueue,
		Interval: gd2c.Views.Interval(), Clock: cfg.Clock, Log: cfg.Log,
	}
	d.Register(states.NodeMachine, &node.Syncer{
		Nodes: nodeLister, Clusters: clusterLister, Pods: podLister, PVCs: corev1listers.NewPersistentVolumeClaimLister(pvcs.indexer),
		Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Live: cfg.Kube, Audit: audit,
		PeerWatched: true, LostNodeGrace: cfg.LostNodeGrace,
	})
	d.Register(states.ClusterMachine, &cluster.Syncer{
		Clusters: clusterLister, Nodes: nodeLister, Secrets: corev1listers.NewSecretLister(secrets.indexer), Services: corev1listers.NewServiceLister(services.indexer),
		StatefulSets: appsv1listers.NewStatefulSetLister(sts.indexer), PVs: pvIndex, CSI: csiL, Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock,
		EndpointSlices: discoveryv1listers.NewEndpointSliceLister(eps.indexer), TLS: tlsIssuer, Audit: audit, Snapshots: snapshots,
	})
	d.Register(states.UpgradeMachine, &upgrade.Syncer{
		Clusters: clusterLister, Nodes: nodeLister, CSI: effects.CSIReader{DaemonSets: csiL.DaemonSets, Deployments: csiL.Deployments, Pods: podLister, Pinned: kops.PinnedNodes},
		Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Audit: audit,
	})
	var volumeMetrics *heal.VolumeMetrics
	if cfg.Metrics != nil {
		volumeMetrics = heal.NewVolumeMetrics()
		if err := cfg.Metrics.Registry.Register(volumeMetrics); err != nil {
			return nil, fmt.Errorf("register the volume metrics: %w", err)
		}
	}
	d.Register(states.HealMachine, &heal.Syncer{
		Interval: cfg.HealInterval, Clusters: clusterLister, Nodes: nodeLister, Anthill: cfg.Anthill, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Audit: audit,
		Volumes: volumeMetrics,
	})
	d.Register(states.DisruptionMachine, &disruption.Syncer{
		Clusters: clusterLister, Nodes: nodeLister, KubeNodes: kubeNodes.Lister(), Client: cfg.Kube,
		Anthill: cfg.Anthill, Kube: kops, GD2: gd2c, Log: tlog, Clock: cfg.Clock, Audit: audit,
	})
	if cfg.Metrics != nil {
		sc := NewStateCollector(nodeLister, clusterLister)
		sc.Pods = podLister
		if err := cfg.Metrics.Registry.Register(sc); err != nil {
			return nil, fmt.Errorf("register the state metrics: %w", err)
		}
		if err := cfg.Metrics.Registry.Register(NewCertificateCollector(corev1listers.NewSecretLister(secrets.indexer))); err != nil {
			return nil, fmt.Errorf("register the certificate metrics: %w", err)
		}
	}
	m := &Machines{Dispatcher: d, PeerWatch: watch, broadcast: bc}
	m.factories = append(m.factories, kf, pvf, everything.anthill, nf, secretCache)
	if len(cfg.Namespaces) > 0 {
		for _, f := range watched {
			m.factories = append(m.factories, f.managed, f.anthill)
		}
	}
	return m, nil
}
