package effects

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

// A node's own client names the node (so a proxy, or the simulator, routes
// the request to that GD2) while connecting to the management endpoint
// override; without an override it would dial the pod's stable name.
func TestGD2ClientsForNodeNamesTheNodeAndDialsTheOverride(t *testing.T) {
	var mu sync.Mutex
	var hosts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
	}))
	defer srv.Close()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtures.GD2Secret)}}
	g := &GD2Clients{Secrets: kubefake.NewClientset(secret).CoreV1()}
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"},
		Spec: operatorv1alpha1.GlusterClusterSpec{Management: &operatorv1alpha1.ManagementSpec{
			Endpoint: srv.URL, AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}}}}
	n := &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc-z1-a"}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc"}}

	if got, want := objects.NodeEndpoint(c, n), "http://gc-z1-a-0.gc-nodes.ns.svc:24007"; got != want {
		t.Fatalf("NodeEndpoint = %s, want %s", got, want)
	}
	cl, err := g.ForNode(context.Background(), c, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := g.ForNode(context.Background(), c, n)
	if err != nil || again != cl {
		t.Fatalf("a second ForNode built another client (%v)", err)
	}
	mc, err := g.For(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 2 || hosts[0] != "gc-z1-a-0.gc-nodes.ns.svc:24007" || hosts[1] == hosts[0] {
		t.Fatalf("Host headers %v: want the node's stable name, then the management endpoint's own", hosts)
	}
	g.ForgetNode("ns", "gc-z1-a")
	if fresh, _ := g.ForNode(context.Background(), c, n); fresh == cl {
		t.Fatal("a forgotten node's client was reused")
	}
}

// The clients count every failed GD2 attempt by operation and class, and
// the class comes from the typed error, never its text.
func TestGD2ClientsCountErrorsByClass(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"errors":[{"code":1,"message":"volume not found"}]}` + "\n"))
	}))
	defer srv.Close()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtures.GD2Secret)}}
	m := engine.NewMetrics()
	g := &GD2Clients{Secrets: kubefake.NewClientset(secret).CoreV1(), Metrics: m}
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"},
		Spec: operatorv1alpha1.GlusterClusterSpec{Management: &operatorv1alpha1.ManagementSpec{
			Endpoint: srv.URL, AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}}}}
	cl, err := g.For(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.VolumeStatus(context.Background(), "gone"); err == nil {
		t.Fatal("no error")
	}
	if got := counted(t, m.GD2Errors.WithLabelValues(string(gd2.OpVolumesStatus), string(gd2.ClassNotFound))); got != 1 {
		t.Fatalf("anthill_gd2_errors_total{class=not_found} = %v, want 1", got)
	}
	if got := counted(t, m.GD2Requests.WithLabelValues(string(gd2.OpVolumesStatus), "404")); got != 1 {
		t.Fatalf("anthill_gd2_requests_total{code=404} = %v, want 1", got)
	}
}

func counted(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// A read that finds a named object missing (404: a volume deleted by an
// admin or a CSI provisioner since the list was read) drops the cluster's
// shared view, so the next list is read live; a successful read keeps it.
func TestANotFoundReadDropsTheClusterView(t *testing.T) {
	var mu sync.Mutex
	lists := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/volumes":
			mu.Lock()
			lists++
			mu.Unlock()
			_, _ = w.Write([]byte(`[{"name":"gone"}]`))
		case "/v1/volumes/kept/bricks":
			_, _ = w.Write([]byte(`[]`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"errors":[{"code":1,"message":"volume not found"}]}` + "\n"))
		}
	}))
	defer srv.Close()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtures.GD2Secret)}}
	g := &GD2Clients{Secrets: kubefake.NewClientset(secret).CoreV1(), Views: &PoolViews{TTL: time.Hour}}
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"},
		Spec: operatorv1alpha1.GlusterClusterSpec{Management: &operatorv1alpha1.ManagementSpec{
			Endpoint: srv.URL, AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}}}}
	ctx := context.Background()
	gc, err := g.For(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	r := g.Shared(c, gc)
	listed := func() int {
		t.Helper()
		if _, err := r.ListVolumes(ctx, gd2.Filter{}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return lists
	}
	listed()
	if _, err := r.BricksStatus(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	if n := listed(); n != 1 {
		t.Fatalf("after a read that found its volume: %d volume lists, want 1 (the view kept)", n)
	}
	if _, err := r.BricksStatus(ctx, "gone"); !errors.Is(err, gd2.ErrNotFound) {
		t.Fatalf("bricks status of a deleted volume: %v, want not found", err)
	}
	if n := listed(); n != 2 {
		t.Fatalf("after a read that found its volume gone: %d volume lists, want 2 (the view dropped)", n)
	}
}
