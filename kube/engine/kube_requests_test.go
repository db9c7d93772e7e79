package engine

import (
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestKubeRequestsAreCountedByVerb(t *testing.T) {
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
	for verb, want := range map[string]float64{"get": 2, "watch": 1, "update": 1, "create": 1, "delete": 0} {
		var got dto.Metric
		if err := m.KubeRequests.WithLabelValues(verb).Write(&got); err != nil {
			t.Fatal(err)
		}
		if got.GetCounter().GetValue() != want {
			t.Errorf("%s: %v requests, want %v", verb, got.GetCounter().GetValue(), want)
		}
	}
}
