package kubelink

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/gluster/anthill/gd2/sim"
)

// HostSink receives host liveness; *sim.Simulator implements it.
type HostSink interface {
	UpsertHost(sim.HostSpec) error
}

// Options selects the pods that are GD2 hosts.
type Options struct {
	Namespace string // "" = all namespaces
	Selector  string // label selector, e.g. "app.kubernetes.io/name=glusterfs"
	Resync    time.Duration
	// OnError reports a failed update (nil = ignored); the next informer
	// event or resync retries it.
	OnError func(error)
	// StartupDelay is how long a host stays down after its pod becomes
	// Ready: GD2's own start-up (reaching its store, spawning its bricks).
	// Zero means alive as soon as Ready.
	StartupDelay time.Duration
}

// ManagementLabel on a pod says whether the pod is behind the cluster's
// management Service; ManagementLeaving takes it out (the operator sets it
// before deleting a leaving node's peer). The simulator models the Service
// by never letting such a host serve requests.
const (
	ManagementLabel   = "operator.gluster.org/management"
	ManagementLeaving = "leaving"
)

// HostFromPod maps a pod to the host it runs: the name is the pod's
// spec.hostname (or its name), the address the stable DNS name a
// headless Service gives it, and it is alive only while Ready and not
// being deleted.
func HostFromPod(p *corev1.Pod) sim.HostSpec {
	name := p.Spec.Hostname
	if name == "" {
		name = p.Name
	}
	addr := name
	if p.Spec.Subdomain != "" {
		addr = fmt.Sprintf("%s.%s.%s.svc", name, p.Spec.Subdomain, p.Namespace)
	}
	return sim.HostSpec{
		Name: name, Address: addr + ":24008", Alive: p.DeletionTimestamp == nil && podReady(p),
		Unserving: p.Labels[ManagementLabel] == ManagementLeaving,
		PeerID:    envPeerID(p),
		Version:   BuildOfImage(gd2Image(p)),
	}
}

// gd2Image is the image of the pod's GD2 container ("" without one).
func gd2Image(p *corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		if c.Name == GD2Container {
			return c.Image
		}
	}
	return ""
}

// releaseTag is a GD2 release tag as an image tag: 4.1.0, v4.1, v5; a
// bare number (20190111, the nightly image's date tags) is not one.
var releaseTag = regexp.MustCompile(`^(v[0-9]+|v?[0-9]+\.[0-9]+(\.[0-9]+)?)$`)

// BuildOfImage is the glusterd-version the GD2 in image reports, as the
// simulator models images: an image tagged with a release (repo:4.1.0)
// runs GD2 built from that release's tag, which GD2's build writes as
// v<release>-0 (glusterd2@54ce5f6f: scripts/pkg-version --full, release 0
// for a tag); any other image (a digest, latest, a date) runs the build
// the simulator was started with, "" here. No GD2 image was ever built
// per release upstream (the nightly image is tagged by date): the rule
// stands for images an admin builds per version.
func BuildOfImage(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		return ""
	}
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i+1:], "/") {
		return ""
	}
	tag := image[i+1:]
	if !releaseTag.MatchString(tag) {
		return ""
	}
	return "v" + strings.TrimPrefix(tag, "v") + "-0"
}

// GD2Container is the name of the GD2 container in a Gluster pod, and
// PeerIDEnv the environment variable that fixes GD2's peer id.
const (
	GD2Container = "glusterd2"
	PeerIDEnv    = "GD2_PEER_ID"
)

// envPeerID is the literal GD2_PEER_ID of the pod's GD2 container (or,
// without a container of that name, of the first container setting it).
// Values taken from elsewhere (valueFrom) cannot be resolved here and
// count as unset.
func envPeerID(p *corev1.Pod) string {
	lookup := func(c *corev1.Container) (string, bool) {
		for _, e := range c.Env {
			if e.Name == PeerIDEnv {
				return e.Value, true
			}
		}
		return "", false
	}
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == GD2Container {
			v, _ := lookup(&p.Spec.Containers[i])
			return v
		}
	}
	for i := range p.Spec.Containers {
		if v, ok := lookup(&p.Spec.Containers[i]); ok {
			return v
		}
	}
	return ""
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Run watches pods until ctx ends, feeding every change to sink.
func Run(ctx context.Context, cs kubernetes.Interface, sink HostSink, opts Options) error {
	report := func(err error) {
		if err != nil && opts.OnError != nil {
			opts.OnError(err)
		}
	}
	if opts.StartupDelay > 0 {
		ss := newStartupSink(sink, opts.StartupDelay, report)
		defer ss.close()
		sink = ss
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, opts.Resync,
		informers.WithNamespace(opts.Namespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = opts.Selector }))
	inf := f.Core().V1().Pods().Informer()
	upsert := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			report(sink.UpsertHost(HostFromPod(p)))
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    upsert,
		UpdateFunc: func(_, obj any) { upsert(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				// The pod is gone but the host keeps its identity (its state
				// lives on a volume): it is down until a pod returns.
				h := HostFromPod(p)
				h.Alive = false
				report(sink.UpsertHost(h))
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch gd2 pods: %w", err)
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return ctx.Err()
	}
	<-ctx.Done()
	return nil
}
