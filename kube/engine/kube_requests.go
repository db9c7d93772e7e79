package engine

import (
	"net/http"
	"strings"
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

// KubeResource names the resource an API request is for, by its URL path:
// the plural resource ("pods", "leases", "glusternodes"), with its
// subresource after a slash ("glusternodes/status"); "other" for a path
// that names none (discovery, /version). Namespaces and object names are
// left out, so the label is bounded by the resources the operator uses.
func KubeResource(r *http.Request) string {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		rest = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		rest = segs[3:]
	default:
		return "other"
	}
	// namespaces/NS/RESOURCE...: a namespaced resource; namespaces or
	// namespaces/NAME alone is the Namespace itself.
	if rest[0] == "namespaces" && len(rest) >= 3 {
		rest = rest[2:]
	}
	if len(rest) >= 3 {
		return rest[0] + "/" + rest[2]
	}
	return rest[0]
}

// CountKubeRequests wraps a client's transport so that each request is
// counted in m.KubeRequests (rest.Config.Wrap).
func CountKubeRequests(m *Metrics) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			m.KubeRequests.WithLabelValues(KubeVerb(r), KubeResource(r)).Inc()
			return next.RoundTrip(r)
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
