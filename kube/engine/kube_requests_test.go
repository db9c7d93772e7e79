package engine

import (
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestKubeRequestsAreCountedByVerbAndResource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	m := NewMetrics()
	c := &http.Client{Transport: CountKubeRequests(m)(http.DefaultTransport)}
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/namespaces/ns/secrets/auth"},
		{http.MethodGet, "/api/v1/pods"},
		{http.MethodGet, "/api/v1/pods?watch=true&resourceVersion=7"},
		{http.MethodPut, "/apis/operator.gluster.org/v1alpha1/namespaces/ns/glusternodes/n/status"},
		{http.MethodPost, "/api/v1/namespaces/ns/events"},
		{http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/anthill-system/leases/anthill-operator"},
		{http.MethodGet, "/api/v1/namespaces/ns"},
		{http.MethodGet, "/api/v1/nodes/n1"},
		{http.MethodGet, "/apis/storage.k8s.io/v1/csidrivers"},
		{http.MethodGet, "/apis"},
		{http.MethodGet, "/version"},
	} {
		req, err := http.NewRequest(r.method, srv.URL+r.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	for _, w := range []struct {
		verb, resource string
		want           float64
	}{
		{"get", "secrets", 1},
		{"get", "pods", 1},
		{"watch", "pods", 1},
		{"update", "glusternodes/status", 1},
		{"create", "events", 1},
		{"update", "leases", 1},
		{"get", "namespaces", 1},
		{"get", "nodes", 1},
		{"get", "csidrivers", 1},
		{"get", "other", 2},
		{"delete", "pods", 0},
	} {
		var got dto.Metric
		if err := m.KubeRequests.WithLabelValues(w.verb, w.resource).Write(&got); err != nil {
			t.Fatal(err)
		}
		if got.GetCounter().GetValue() != w.want {
			t.Errorf("%s %s: %v requests, want %v", w.verb, w.resource, got.GetCounter().GetValue(), w.want)
		}
	}
}
