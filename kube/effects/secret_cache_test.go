package effects

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

// secretGets counts the Secret GETs kube has served.
func secretGets(kube *kubefake.Clientset) int {
	n := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" {
			n++
		}
	}
	return n
}

// startCache starts, on kube, the labelled Secret informer the operator
// runs (managed-by=anthill) and a SecretCache over it.
func startCache(t *testing.T, kube *kubefake.Clientset) *SecretCache {
	t.Helper()
	kf := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = objects.LabelManagedBy + "=" + objects.ManagedByAnthill
	}))
	lister := kf.Core().V1().Secrets().Lister()
	stop := make(chan struct{})
	kf.Start(stop)
	kf.WaitForCacheSync(stop)
	c := &SecretCache{Kube: kube, Labelled: lister}
	c.Start(stop)
	t.Cleanup(func() {
		c.Shutdown()
		close(stop)
		kf.Shutdown()
	})
	return c
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitWatched waits until the cache's watch of each named Secret has
// synced and holds it.
func waitWatched(t *testing.T, c *SecretCache, names ...string) {
	t.Helper()
	for _, name := range names {
		waitFor(t, "the watch of "+name, func() bool {
			c.mu.Lock()
			w, ok := c.watches[fixtures.Namespace+"/"+name]
			c.mu.Unlock()
			if !ok || !w.inf.HasSynced() {
				return false
			}
			_, held, _ := w.inf.GetStore().GetByKey(fixtures.Namespace + "/" + name)
			return held
		})
	}
}

func userAuthSecret(value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fixtures.Namespace, Name: "auth"}, Data: map[string][]byte{"secret": []byte(value)}}
}

// A steady sync reads the GD2 auth secret (an admin's, unlabelled), the CA
// secret (an admin's) and the trust and certificate Secrets (anthill's)
// from watches: once they are cached, neither a GD2 client nor the TLS
// check sends a Secret GET.
func TestSteadySyncsSendNoSecretGet(t *testing.T) {
	ca := caSecret(t, "gluster-ca", nil)
	f := newFxTLS(t, []runtime.Object{ca, userAuthSecret(fixtures.GD2Secret)})
	f.c.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: "https://gd2.invalid:24007", AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}}
	fixtures.Must(t, f.tls.IssueCertificates(fixtures.Ctx, f.c, f.nodes), "issue")
	f.reloadNodes(t)

	cache := startCache(t, f.kube)
	f.tls.Cache = cache
	g := &GD2Clients{Secrets: f.kube.CoreV1(), Cache: cache}
	steady := func() {
		t.Helper()
		if _, err := g.For(fixtures.Ctx, f.c); err != nil {
			t.Fatal(err)
		}
		if _, err := g.ForNode(fixtures.Ctx, f.c, f.nodes[0]); err != nil {
			t.Fatal(err)
		}
		if ch := f.check(t); len(ch.Due) != 0 || ch.Problem != "" {
			t.Fatalf("TLS check: due %v, problem %q", ch.Due, ch.Problem)
		}
	}
	// The first sync reads the admin's Secrets live and starts their watches.
	steady()
	waitWatched(t, cache, "auth", "gluster-ca")
	if n := cache.Watched(); n != 2 {
		t.Fatalf("%d Secrets watched by name, want 2 (only the admin's: anthill's are in the labelled informer)", n)
	}
	f.kube.ClearActions()
	for range 3 {
		steady()
	}
	if n := secretGets(f.kube); n != 0 {
		t.Fatalf("steady syncs sent %d Secret GETs, want 0", n)
	}
}

// A Secret the admin creates after the cluster is found by the next read,
// without waiting for any watch; a rotated one reaches the GD2 client.
func TestSecretCacheFindsANewSecretAtOnceAndFollowsRotation(t *testing.T) {
	kube := kubefake.NewClientset()
	cache := startCache(t, kube)
	ctx := context.Background()
	if _, err := cache.Get(ctx, fixtures.Namespace, "auth"); !apierrors.IsNotFound(err) {
		t.Fatalf("a missing Secret: %v, want NotFound", err)
	}
	if _, err := kube.CoreV1().Secrets(fixtures.Namespace).Create(ctx, userAuthSecret("first"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec, err := cache.Get(ctx, fixtures.Namespace, "auth")
	if err != nil || string(sec.Data["secret"]) != "first" {
		t.Fatalf("right after creation: %v, %v", sec, err)
	}

	c := fixtures.Cluster("gc")
	c.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: "http://gd2.invalid:24007", AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}}
	g := &GD2Clients{Secrets: kube.CoreV1(), Cache: cache}
	first, err := g.For(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	rotated := userAuthSecret("second")
	rotated.ResourceVersion = "2"
	if _, err := kube.CoreV1().Secrets(fixtures.Namespace).Update(ctx, rotated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rotated secret", func() bool {
		sec, err := cache.Get(ctx, fixtures.Namespace, "auth")
		return err == nil && string(sec.Data["secret"]) == "second"
	})
	again, err := g.For(ctx, c)
	if err != nil || again == first {
		t.Fatalf("after rotation the client was not rebuilt (%v)", err)
	}
}

// Before Start every read is live; a watch no read used for Idle stops.
func TestSecretCacheReadsLiveUntilStartedAndDropsIdleWatches(t *testing.T) {
	own := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fixtures.Namespace, Name: "own",
		Labels: map[string]string{objects.LabelManagedBy: objects.ManagedByAnthill}}}
	kube := kubefake.NewClientset(userAuthSecret("v"), own)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	labelled := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	sc := &SecretCache{Kube: kube, Clock: clk, Idle: 10 * time.Minute, Labelled: corev1listers.NewSecretLister(labelled)}
	if _, err := sc.Get(ctx, fixtures.Namespace, "auth"); err != nil {
		t.Fatal(err)
	}
	if sc.Watched() != 0 || secretGets(kube) != 1 {
		t.Fatalf("before Start: %d watches, %d GETs; want 0 and 1", sc.Watched(), secretGets(kube))
	}
	stop := make(chan struct{})
	defer close(stop)
	sc.Start(stop)
	defer sc.Shutdown()
	if _, err := sc.Get(ctx, fixtures.Namespace, "auth"); err != nil {
		t.Fatal(err)
	}
	if sc.Watched() != 1 {
		t.Fatalf("%d watches after a read, want 1", sc.Watched())
	}
	clk.Step(11 * time.Minute)
	if _, err := sc.Get(ctx, fixtures.Namespace, "other"); !apierrors.IsNotFound(err) {
		t.Fatalf("a missing Secret: %v", err)
	}
	sc.mu.Lock()
	_, kept := sc.watches[fixtures.Namespace+"/auth"]
	sc.mu.Unlock()
	if kept || sc.Watched() != 1 {
		t.Fatalf("the idle watch of auth was kept (%d watches)", sc.Watched())
	}
	// Reads the labelled informer answers sweep too.
	if err := labelled.Add(own); err != nil {
		t.Fatal(err)
	}
	clk.Step(11 * time.Minute)
	if _, err := sc.Get(ctx, fixtures.Namespace, "own"); err != nil {
		t.Fatal(err)
	}
	if sc.Watched() != 0 {
		t.Fatalf("%d idle watches kept while reads hit the labelled informer", sc.Watched())
	}
}

// A Secret watched by name is stored without its managedFields, as the
// shared informers store theirs (objects.TrimForCache); a live read
// keeps them.
func TestSecretWatchesStoreNoManagedFields(t *testing.T) {
	sec := userAuthSecret("s")
	sec.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	kube := kubefake.NewClientset(sec)
	cache := startCache(t, kube)
	ctx := context.Background()
	// The first read starts the watch; it is live unless the watch
	// happened to sync before Get looked, so it proves nothing here.
	if _, err := cache.Get(ctx, fixtures.Namespace, "auth"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a read served by the watch", func() bool {
		before := secretGets(kube)
		got, err := cache.Get(ctx, fixtures.Namespace, "auth")
		if err != nil || secretGets(kube) != before {
			return false
		}
		if len(got.ManagedFields) != 0 {
			t.Fatalf("the watched Secret kept its managedFields: %+v", got.ManagedFields)
		}
		return true
	})
	// Trimming the watch's copy left the stored object whole.
	live, err := kube.CoreV1().Secrets(fixtures.Namespace).Get(ctx, "auth", metav1.GetOptions{})
	if err != nil || len(live.ManagedFields) != 1 {
		t.Fatalf("the live read: %v managedFields, %v", live, err)
	}
}
