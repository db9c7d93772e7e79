package effects

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
)

// GD2Clients hands out one GD2 client per GlusterCluster, built from the
// cluster's GD2 endpoints (objects.GD2Endpoints) and its auth secret. A client is
// rebuilt when either changes, so rotating the secret, moving the endpoint
// or editing an external cluster's addresses takes effect on the next sync.
// An external cluster's client talks to the pool's addresses themselves,
// sticking to one that answers and failing over in order (failoverTransport).
type GD2Clients struct {
	// Secrets is the live API, read when Cache is nil.
	Secrets typedcorev1.SecretsGetter
	// Cache, if set, serves the auth and CA secrets from watches (see
	// SecretCache): the auth secret may be one the admin supplied (not
	// labelled by anthill) or one just created, so a cache miss reads
	// live, and a rotated secret reaches the cache as a watch event, so
	// the next sync uses it.
	Cache *SecretCache
	// Views, if set, is told of every GD2 call that may change a
	// cluster's configuration, so that it re-reads that cluster's shared
	// lists (see PoolViews).
	Views   *PoolViews
	Metrics *engine.Metrics
	// Timeout bounds each GD2 call.
	Timeout time.Duration
	// Log, if set, records every GD2 address failover.
	Log *zap.Logger

	mu    sync.Mutex
	cache map[string]gd2Entry
}

type gd2Entry struct {
	endpoint, secretVersion string
	client                  *gd2.Client
}

// ErrNoAuthSecret means the cluster's GD2 auth secret does not exist yet
// (cluster provisioning creates it).
type ErrNoAuthSecret struct{ Namespace, Name string }

func (e *ErrNoAuthSecret) Error() string {
	return fmt.Sprintf("GD2 auth secret %s/%s not found", e.Namespace, e.Name)
}

// syncRetry is the GD2 clients' retry policy. A sync holds one of the
// dispatcher's workers while it waits: one quick retry rides out a blip,
// then the decision waits (GD2 unreachable) and the dispatcher requeues,
// instead of a worker sleeping through a GD2 that is not up yet (every
// sync of a new cluster would otherwise spend almost two seconds in the
// default policy's back-off).
var syncRetry = gd2.RetryPolicy{MaxAttempts: 2, BaseDelay: 100 * time.Millisecond, MaxDelay: 100 * time.Millisecond}

// secrets is where the clients' Secrets are read.
func (g *GD2Clients) secrets() secretReader {
	if g.Cache != nil {
		return g.Cache
	}
	return liveSecrets{g.Secrets}
}

// authSecret reads c's GD2 auth secret and returns its value and resource
// version.
func (g *GD2Clients) authSecret(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (string, string, error) {
	name, key := objects.AuthSecretRef(c)
	sec, err := g.secrets().Get(ctx, c.Namespace, name)
	if apierrors.IsNotFound(err) {
		return "", "", &ErrNoAuthSecret{Namespace: c.Namespace, Name: name}
	}
	if err != nil {
		return "", "", fmt.Errorf("read GD2 auth secret %s/%s: %w", c.Namespace, name, err)
	}
	secret := string(sec.Data[key])
	if secret == "" {
		return "", "", fmt.Errorf("GD2 auth secret %s/%s has no key %q", c.Namespace, name, key)
	}
	return secret, sec.ResourceVersion, nil
}

// trust is the CA bundle c's GD2 servers are verified against (nil
// without spec.caSecretRef) and the server name to check for an endpoint
// that is not the server's own name: a cluster anthill issues for, reached
// through spec.management.endpoint (a tunnel to the management Service),
// is checked as the management Service, the name its certificates carry.
// An external pool is checked by the names in its addresses.
func (g *GD2Clients) trust(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (bundle []byte, version, serverName string, err error) {
	if !objects.TLSEnabled(c) {
		return nil, "", "", nil
	}
	if bundle, version, err = trustBundle(ctx, g.secrets(), c); err != nil {
		return nil, "", "", err
	}
	if m := c.Spec.Management; m != nil && m.Endpoint != "" && !objects.IsExternal(c) {
		serverName = objects.ManagementHost(c)
	}
	return bundle, version, serverName, nil
}

// For returns the GD2 client of c.
func (g *GD2Clients) For(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (*gd2.Client, error) {
	secret, secretVersion, err := g.authSecret(ctx, c)
	if err != nil {
		return nil, err
	}
	bundle, trustVersion, serverName, err := g.trust(ctx, c)
	if err != nil {
		return nil, err
	}
	secretVersion += "|" + trustVersion
	endpoints := objects.GD2Endpoints(c)
	endpoint := strings.Join(endpoints, ",")
	id := c.Namespace + "/" + c.Name
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.cache[id]; ok && e.endpoint == endpoint && e.secretVersion == secretVersion {
		return e.client, nil
	}
	opts := gd2.Options{Endpoint: endpoints[0], Secret: secret, Timeout: g.Timeout, Retry: &syncRetry, CACert: bundle, ServerName: serverName}
	opts.Observer = g.observer(id)
	if len(endpoints) > 1 {
		tr, err := newFailoverTransport(endpoints, failoverLogger(g.Log, c.Namespace, c.Name), bundle)
		if err != nil {
			return nil, fmt.Errorf("GD2 client for %s: %w", endpoint, err)
		}
		opts.HTTPClient = &http.Client{Transport: tr}
		opts.CACert, opts.ServerName = nil, ""
	}
	cl, err := gd2.New(opts)
	if err != nil {
		return nil, fmt.Errorf("GD2 client for %s: %w", endpoint, err)
	}
	if g.cache == nil {
		g.cache = map[string]gd2Entry{}
	}
	g.cache[id] = gd2Entry{endpoint: endpoint, secretVersion: secretVersion, client: cl}
	return cl, nil
}

// ForNode returns a client bound to node's own GD2 (its pod's stable
// address, or spec.externalAddress), not the management Service. GD2 runs
// some steps on the node that serves the request: replace-brick sizes the
// new brick from the source brick's path on the serving node, so it must
// reach the node that holds the source brick (fact sheet §7).
//
// With spec.management.endpoint set (an operator outside the cluster
// network, and the tests) every connection goes to that endpoint while the
// request still names the node (URL host, Host header, TLS server name), as
// through a proxy that routes by host.
func (g *GD2Clients) ForNode(ctx context.Context, c *operatorv1alpha1.GlusterCluster, node *operatorv1alpha1.GlusterNode) (*gd2.Client, error) {
	secret, secretVersion, err := g.authSecret(ctx, c)
	if err != nil {
		return nil, err
	}
	// The URL names the node, so the check is against the node's own name
	// (its certificate's first name), also through an endpoint override.
	bundle, trustVersion, _, err := g.trust(ctx, c)
	if err != nil {
		return nil, err
	}
	secretVersion += "|" + trustVersion
	endpoint := objects.NodeEndpoint(c, node)
	dial := ""
	if m := c.Spec.Management; m != nil && m.Endpoint != "" {
		u, err := url.Parse(m.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("management endpoint %q: %w", m.Endpoint, err)
		}
		dial = u.Host
		if u.Port() == "" {
			dial = net.JoinHostPort(u.Hostname(), defaultPort(u.Scheme))
		}
	}
	id := "node:" + node.Namespace + "/" + node.Name
	want := endpoint + "|" + dial
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.cache[id]; ok && e.endpoint == want && e.secretVersion == secretVersion {
		return e.client, nil
	}
	opts := gd2.Options{Endpoint: endpoint, Secret: secret, Timeout: g.Timeout, Retry: &syncRetry, CACert: bundle}
	opts.Observer = g.observer(c.Namespace + "/" + c.Name)
	opts.DialAddress = dial
	cl, err := gd2.New(opts)
	if err != nil {
		return nil, fmt.Errorf("GD2 client for node %s at %s: %w", node.Name, endpoint, err)
	}
	if g.cache == nil {
		g.cache = map[string]gd2Entry{}
	}
	g.cache[id] = gd2Entry{endpoint: want, secretVersion: secretVersion, client: cl}
	return cl, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// ForgetNode drops the client of a deleted node.
func (g *GD2Clients) ForgetNode(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.cache, "node:"+namespace+"/"+name)
}

// Forget drops the client and the shared view of a deleted cluster.
func (g *GD2Clients) Forget(namespace, name string) {
	if g.Views != nil {
		g.Views.Forget(namespace + "/" + name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.cache, namespace+"/"+name)
}

// Shared returns gc, the client of c, with c's peer and device lists
// shared through Views (gc itself without Views).
func (g *GD2Clients) Shared(c *operatorv1alpha1.GlusterCluster, gc *gd2.Client) GD2Reader {
	return g.SharedWithin(c, gc, 0)
}

// SharedWithin is Shared with the peer list at most maxPeerAge old when
// that is positive and shorter than Views' interval: the reads that set
// liveness clocks (PoolViews.Reads).
func (g *GD2Clients) SharedWithin(c *operatorv1alpha1.GlusterCluster, gc *gd2.Client, maxPeerAge time.Duration) GD2Reader {
	if g.Views == nil {
		return gc
	}
	return g.Views.Reads(c.Namespace+"/"+c.Name, gc, maxPeerAge)
}

// Refreshing is Shared with c's peer list read live and kept for its
// other readers (PoolViews.Refresh): the peer watch's reads.
func (g *GD2Clients) Refreshing(c *operatorv1alpha1.GlusterCluster, gc *gd2.Client) GD2Reader {
	if g.Views == nil {
		return gc
	}
	return g.Views.Refresh(c.Namespace+"/"+c.Name, gc)
}

// GD2Reader is the GD2 reads the machines' syncs and previews make (node,
// heal, disruption, drain preview), declared once: *gd2.Client has them,
// and SharedReads serves the peer and device lists from a cluster's
// shared view.
type GD2Reader interface {
	ListPeers(ctx context.Context, f gd2.Filter) ([]gd2.Peer, error)
	ListAllDevices(ctx context.Context) ([]gd2.Device, error)
	ListVolumes(ctx context.Context, f gd2.Filter) ([]gd2.Volume, error)
	BricksStatus(ctx context.Context, volume string) ([]gd2.BrickStatus, error)
	HealInfo(ctx context.Context, volume string, kind gd2.HealInfoKind) ([]gd2.BrickHealInfo, error)
	VolumeStatus(ctx context.Context, volume string) (*gd2.VolumeStatus, error)
}

// observer is the request observer of a client of cluster (namespace/name),
// nil when there is nothing to tell.
func (g *GD2Clients) observer(cluster string) gd2.Observer {
	if g.Metrics == nil && g.Views == nil {
		return nil
	}
	return gd2Observer{m: g.Metrics, views: g.Views, cluster: cluster}
}

// gd2Observer feeds the GD2 client's request observations into the
// operator's metrics, and drops the cluster's shared view after a request
// that may have changed it (failed ones too: a failed GD2 transaction may
// have changed something before it failed).
type gd2Observer struct {
	m       *engine.Metrics
	views   *PoolViews
	cluster string
}

// ObserveRequest records one GD2 request attempt.
func (o gd2Observer) ObserveRequest(op gd2.Operation, code int, d time.Duration) {
	// A 404 is a named object (a volume, a peer, a device) missing: the
	// shared lists may predate its deletion elsewhere, so the next read
	// is live.
	if o.views != nil && (changesConfig(op) || code == http.StatusNotFound) {
		o.views.Invalidate(o.cluster)
	}
	if o.m == nil {
		return
	}
	o.m.GD2Requests.WithLabelValues(string(op), strconv.Itoa(code)).Inc()
	o.m.GD2Duration.WithLabelValues(string(op)).Observe(d.Seconds())
}

// ObserveHedge counts one GD2 read sent again beside a first that had
// not answered in time.
func (o gd2Observer) ObserveHedge(op gd2.Operation) {
	if o.m == nil {
		return
	}
	o.m.GD2Hedges.WithLabelValues(string(op)).Inc()
}

// ObserveError counts one failed GD2 request attempt by its class.
func (o gd2Observer) ObserveError(op gd2.Operation, class gd2.ErrorClass) {
	if o.m == nil {
		return
	}
	o.m.GD2Errors.WithLabelValues(string(op), string(class)).Inc()
}
