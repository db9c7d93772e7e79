package engine

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the operator's Prometheus metrics, registered on one injected
// registry. Every label is bounded: machine, state and event names come from
// the machine definitions, operations from a constant set, codes from HTTP.
type Metrics struct {
	Registry *prometheus.Registry

	// Transitions counts committed transitions.
	Transitions *prometheus.CounterVec
	// SyncDuration observes one dispatcher sync.
	SyncDuration *prometheus.HistogramVec
	// SyncErrors counts syncs that ended in an error, by machine and error
	// class (transient, conflict, permanent) — never by message.
	SyncErrors *prometheus.CounterVec
	// GD2Requests and GD2Duration observe the GD2 client (fed by the
	// operator's gd2.Observer).
	GD2Requests *prometheus.CounterVec
	GD2Duration *prometheus.HistogramVec
	// GD2Errors counts failed GD2 request attempts by operation and
	// gd2.ErrorClass (a fixed set), never by message.
	GD2Errors *prometheus.CounterVec
	// GD2Hedges counts the GD2 reads sent a second time because the
	// first had not answered in time, by operation.
	GD2Hedges *prometheus.CounterVec
	// TransitionEventsSuppressed counts transitions the per-object rate
	// limit kept from becoming Events (the log line is still written);
	// TransitionEventErrors those whose Event the API server refused.
	TransitionEventsSuppressed *prometheus.CounterVec
	TransitionEventErrors      *prometheus.CounterVec
	// KubeRequests counts the operator's requests to the Kubernetes API
	// server, by verb and resource (see KubeVerb, KubeResource): what the
	// operator's polling costs the API server, the client rate limit it
	// spends, and which writes a fleet at rest still makes.
	KubeRequests *prometheus.CounterVec
}

// NewMetrics builds and registers the metrics on a fresh registry that also
// carries the Go and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		Transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_fsm_transitions_total",
			Help: "State-machine transitions committed, by machine, source state, target state and event.",
		}, []string{"machine", "from", "to", "event"}),
		SyncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "anthill_dispatcher_sync_duration_seconds",
			Help:    "Time one dispatcher sync took, by machine.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"machine"}),
		SyncErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_dispatcher_sync_errors_total",
			Help: "Dispatcher syncs that failed, by machine and error class.",
		}, []string{"machine", "class"}),
		GD2Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_gd2_requests_total",
			Help: "GD2 REST requests, by operation and HTTP status code (0 = no response).",
		}, []string{"operation", "code"}),
		GD2Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_gd2_errors_total",
			Help: "Failed GD2 REST request attempts, by operation and error class (node_down, lock_conflict, not_found, auth, txn_step, timeout, refused, server, transport, bad_response, canceled, other).",
		}, []string{"operation", "class"}),
		GD2Hedges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_gd2_hedged_reads_total",
			Help: "GD2 REST reads sent a second time, beside the first, because the first had not answered in time, by operation.",
		}, []string{"operation"}),
		GD2Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "anthill_gd2_request_duration_seconds",
			Help:    "GD2 REST request latency, by operation.",
			Buckets: prometheus.ExponentialBuckets(0.002, 2, 14),
		}, []string{"operation"}),
		TransitionEventsSuppressed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_transitionlog_suppressed_total",
			Help: "Transitions not recorded as Events because their object exceeded the Event rate limit, by machine.",
		}, []string{"machine"}),
		TransitionEventErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_transitionlog_write_errors_total",
			Help: "Transition Events the API server did not accept, by machine.",
		}, []string{"machine"}),
		KubeRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anthill_kube_requests_total",
			Help: "Requests to the Kubernetes API server, by verb (get: reads of one object or a list; watch: each watch started) and resource (plural, with /subresource; other: discovery and paths naming none).",
		}, []string{"verb", "resource"}),
	}
	reg.MustRegister(m.TransitionEventsSuppressed, m.TransitionEventErrors, m.Transitions, m.SyncDuration, m.SyncErrors, m.GD2Requests, m.GD2Duration, m.GD2Errors, m.GD2Hedges, m.KubeRequests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
