package operator

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/gluster/anthill/kube/engine"
)

// Server serves /healthz (the process is alive), /readyz (informers synced)
// and /metrics, and with profiling on Go's runtime profiles under
// /debug/pprof/.
type Server struct {
	ready atomic.Bool
	srv   *http.Server
	ln    net.Listener
	log   *zap.Logger
}

// NewServer listens on addr at once, so a port conflict is reported before
// the operator does anything else. profiling adds /debug/pprof/ (heap,
// goroutines, CPU and the rest of net/http/pprof), off by default: a
// profile names the operator's internals and a CPU profile costs while it
// runs.
func NewServer(addr string, m *engine.Metrics, log *zap.Logger, profiling bool) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return s, nil
}

// Addr is the address actually listened on (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// SetReady flips /readyz.
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// Run serves until ctx ends, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
