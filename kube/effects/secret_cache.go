package effects

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/kube/objects"
)

// DefaultSecretWatchIdle is how long a Secret watched by name stays
// watched after the last sync that read it.
const DefaultSecretWatchIdle = 10 * time.Minute

// SecretCache serves the Secrets a sync reads (GD2 auth secrets, CA and
// trust secrets) from watches, so that a steady sync sends no request to
// the API server for them.
//
// Two kinds of Secret are read. Those anthill creates carry its
// managed-by label and are in the shared informer (Labelled). Those an admin
// supplies (spec.management.authSecretRef, spec.caSecretRef) carry no
// label anthill may rely on; each is watched on its own, with a
// list/watch scoped by namespace and metadata.name (as the kubelet watches
// the Secrets its pods name), from the first read on, and no longer once no
// sync has read it for Idle. That keeps the cache to the Secrets clusters
// name, never every Secret of the cluster.
//
// Freshness: a Secret the watch does not (yet) hold is read live, so a
// Secret the admin just created is found by the next sync, not when a watch
// catches up; an update (a rotated secret) reaches the cache as a watch
// event, within the API server's watch latency. Before Start every read is
// live.
type SecretCache struct {
	// Kube is read on every cache miss, and watched.
	Kube kubernetes.Interface
	// Labelled lists the Secrets anthill labels (the informer of
	// kube/machines/wiring.go); nil reads only the per-name watches.
	Labelled corev1listers.SecretLister
	// Idle defaults to DefaultSecretWatchIdle.
	Idle  time.Duration
	Clock clock.Clock

	mu sync.Mutex
	// base ends every watch; nil before Start.
	base    context.Context
	cancel  context.CancelFunc
	watches map[string]*secretWatch
	swept   time.Time
}

type secretWatch struct {
	inf  cache.SharedIndexInformer
	stop context.CancelFunc
	used time.Time
}

// Start lets the cache watch Secrets by name until stop closes. It starts
// nothing itself: a watch starts on the first read of its Secret.
func (s *SecretCache) Start(stop <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base != nil {
		return
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	cancel := s.cancel
	go func() {
		<-stop
		cancel()
	}()
}

// Shutdown stops every per-name watch; later reads are live.
func (s *SecretCache) Shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	s.base, s.cancel, s.watches = nil, nil, nil
}

// Watched is how many Secrets are watched by name (metrics, tests).
func (s *SecretCache) Watched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches)
}

// Get returns the Secret namespace/name: from the labelled informer, else
// from its own watch once that has synced and holds it, else live (an
// apierrors NotFound when it does not exist). The returned object is
// shared with the cache: never modify it.
func (s *SecretCache) Get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	// Sweep on every read, not only on a labelled miss: once anthill's own
	// secret is in the labelled informer, the watch a first miss started
	// for it is never read again.
	s.mu.Lock()
	s.sweep(s.now())
	s.mu.Unlock()
	if s.Labelled != nil {
		if sec, err := s.Labelled.Secrets(namespace).Get(name); err == nil {
			return sec, nil
		}
	}
	if inf := s.watch(namespace, name); inf != nil && inf.HasSynced() {
		obj, ok, err := inf.GetStore().GetByKey(namespace + "/" + name)
		if err == nil && ok {
			if sec, ok := obj.(*corev1.Secret); ok {
				return sec, nil
			}
		}
	}
	return s.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (s *SecretCache) now() time.Time {
	if s.Clock != nil {
		return s.Clock.Now()
	}
	return time.Now()
}

// watch returns the informer of namespace/name, starting it if the cache
// is started and none runs; nil before Start.
func (s *SecretCache) watch(namespace, name string) cache.SharedIndexInformer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base == nil {
		return nil
	}
	now := s.now()
	key := namespace + "/" + name
	if w, ok := s.watches[key]; ok {
		w.used = now
		return w.inf
	}
	secrets := s.Kube.CoreV1().Secrets(namespace)
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return secrets.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return secrets.Watch(ctx, o)
		},
	}
	// A fake clientset (tests) cannot stream a watch-list; the wrapper
	// tells the reflector so.
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, s.Kube), &corev1.Secret{}, 0, cache.Indexers{})
	// SetTransform refuses only an informer already started; this one is not.
	_ = inf.SetTransform(objects.TrimForCache)
	ctx, stop := context.WithCancel(s.base)
	if s.watches == nil {
		s.watches = map[string]*secretWatch{}
	}
	s.watches[key] = &secretWatch{inf: inf, stop: stop, used: now}
	go inf.RunWithContext(ctx)
	return inf
}

// sweep stops the watches no read used for Idle, at most once a minute.
// Called with mu held.
func (s *SecretCache) sweep(now time.Time) {
	if s.base == nil || now.Sub(s.swept) < time.Minute {
		return
	}
	s.swept = now
	idle := s.Idle
	if idle <= 0 {
		idle = DefaultSecretWatchIdle
	}
	for k, w := range s.watches {
		if now.Sub(w.used) > idle {
			w.stop()
			delete(s.watches, k)
		}
	}
}

// secretReader is what reads Secrets: a SecretCache, or liveSecrets.
type secretReader interface {
	Get(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// liveSecrets reads every Secret from the API server.
type liveSecrets struct{ typedcorev1.SecretsGetter }

func (l liveSecrets) Get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return l.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}
