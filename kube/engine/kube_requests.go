package engine

import (
	"net/http"
)

// KubeVerb names an API request by its HTTP method, with watches apart
// from reads: get, watch, create, update, patch, delete, or other. The
// label stays bounded whatever the URL.
func KubeVerb(r *http.Request) string {
	switch r.Method {
	case http.MethodGet:
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			return "watch"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return "other"
}

// CountKubeRequests wraps a client's transport so that each request is
// counted in m.KubeRequests (rest.Config.Wrap).
func CountKubeRequests(m *Metrics) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			m.KubeRequests.WithLabelValues(KubeVerb(r)).Inc()
			return next.RoundTrip(r)
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
