package effects

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gluster/anthill/kube/engine"
)

// failoverDialTimeout bounds one connection attempt to one address of an
// external pool, so that an address that swallows packets costs seconds,
// not the whole request, before the next one is tried.
const failoverDialTimeout = 5 * time.Second

// failoverTransport sends each GD2 request to one of several addresses of
// the same pool (an external cluster's servers). It sticks to the address
// that last answered and moves on, in order, when that one stops
// answering:
//
//   - a connection that cannot be made (refused, unreachable, dial
//     timeout) never reached GD2, so the same request is tried at once on
//     the next address, each address at most once per request;
//   - any other transport error (a connection reset, a response that never
//     came before the deadline) may have reached GD2, so the request is not
//     resent here — the GD2 client's own retry policy decides that — but
//     the next request starts at the next address.
//
// Any HTTP response, error statuses included, counts as answering: a GD2
// that answers 500 is alive and says something the caller must see.
type failoverTransport struct {
	base    http.RoundTripper
	targets []*url.URL
	current atomic.Int32
	// onSwitch, if set, is told when the current address changes.
	onSwitch func(from, to string, err error)
}

func newFailoverTransport(endpoints []string, onSwitch func(from, to string, err error), caBundle []byte) (*failoverTransport, error) {
	t := &failoverTransport{onSwitch: onSwitch}
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil {
			return nil, err
		}
		t.targets = append(t.targets, u)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = (&net.Dialer{Timeout: failoverDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	base.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		// The pool's CA replaces the system roots, as for one endpoint.
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("CA bundle contains no PEM certificates")
		}
		base.TLSClientConfig.RootCAs = pool
	}
	t.base = base
	return t, nil
}

// Current is the address requests go to now.
func (t *failoverTransport) Current() string { return t.targets[t.current.Load()].Host }

func (t *failoverTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	n := int32(len(t.targets))
	start := t.current.Load()
	var lastErr error
	for i := range n {
		idx := (start + i) % n
		r := req.Clone(req.Context())
		r.URL.Scheme, r.URL.Host, r.Host = t.targets[idx].Scheme, t.targets[idx].Host, ""
		if i > 0 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, lastErr
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		resp, err := t.base.RoundTrip(r)
		if err == nil {
			t.moveTo(start, idx, lastErr)
			return resp, nil
		}
		lastErr = err
		if !isDialError(err) || req.Context().Err() != nil {
			if !errors.Is(req.Context().Err(), context.Canceled) {
				// Not answering (as opposed to the caller giving up): the
				// next request tries the next address.
				t.moveTo(idx, (idx+1)%n, err)
			}
			return nil, err
		}
	}
	return nil, lastErr
}

// moveTo makes to the current address if from still is (a concurrent
// request may have moved it already).
func (t *failoverTransport) moveTo(from, to int32, cause error) {
	if from == to || !t.current.CompareAndSwap(from, to) {
		return
	}
	if t.onSwitch != nil {
		t.onSwitch(t.targets[from].Host, t.targets[to].Host, cause)
	}
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// base transport.
func (t *failoverTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// failoverLogger logs every change of a cluster's current GD2 address.
func failoverLogger(log *zap.Logger, namespace, name string) func(from, to string, err error) {
	if log == nil {
		return nil
	}
	return func(from, to string, err error) {
		log.Info("gd2 address changed", zap.String(engine.LogNamespace, namespace), zap.String(engine.LogName, name),
			zap.String(engine.LogFrom, from), zap.String(engine.LogTo, to), zap.NamedError(engine.LogError, err))
	}
}
