package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/gd2/sim/kubelink"
)

// GlusterPodSelector selects the Gluster server pods anthill runs; the GD2
// simulator treats each Ready one as a live GD2 host.
const GlusterPodSelector = "app.kubernetes.io/component=gluster-node"

// GD2Sim is a GD2 simulator serving real HTTP on loopback, linked to the
// control plane's pods: a host exists and is alive while its pod is Ready.
type GD2Sim struct {
	*sim.Simulator
	// URL is the base URL of the simulated management endpoint.
	URL string
	// Secret is the GD2 auth secret (64 hex characters).
	Secret string
	// TLS counts handshakes, failed handshakes and plain-HTTP attempts
	// when the simulator serves TLS (SimOptions.TLS); nil otherwise.
	TLS *sim.TLSStats

	srv    *http.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// SandboxWriteRate and SandboxHealRate are the simulator's client write
// rate per replica set and self-heal rate per brick, in entries per second,
// that the sandbox runs (`make sandbox`): a brick that was down or was just
// moved has a backlog that heals in some seconds, slow enough to watch a
// volume go HealPending -> Healing -> Healthy. The benchmarks of what users
// run (a drain, a zone-batched upgrade) run at these rates too.
const (
	SandboxWriteRate = 2
	SandboxHealRate  = 20
)

// SimOptions adjust the simulator; zero values take the simulator's
// defaults.
type SimOptions struct {
	Seed                int64
	WriteRate, HealRate float64
	DevicesPerPeer      int
	DeviceSize          uint64
	StatePath           string
	// Addr is the listen address; default a free loopback port.
	Addr string
	// StartupDelay: a restarted peer is alive this long after its pod is
	// Ready (GD2's own start-up); zero means at once.
	StartupDelay time.Duration
	// Namespace limits the pod link to one namespace ("" = all). Each
	// Gluster cluster has its own GD2 pool, so a test cluster gets its own
	// simulator linked to its own namespace.
	Namespace string
	// TLS serves TLS only (min 1.2), each pod's certificate read from the
	// Secret its GD2_CERT_FILE is mounted from (kubelink.Certificates), as
	// GD2 configured with cert-file and key-file.
	TLS bool
	// Certificates, with TLS, replaces the pods' certificates (an
	// external pool's servers, which run no pod).
	Certificates sim.CertSource
	// LivenessTTL and BrickReconnect are GD2's delays (sim.Config): how
	// long a crashed GD2 still shows online, how long a restarted node's
	// bricks stay unreachable. Zero means at once (sim.Instant), which
	// keeps tests fast; set them to see GD2's timing.
	LivenessTTL, BrickReconnect time.Duration
	// UnmountedBrickStarts is the probability that a restarted pod's GD2
	// starts its bricks unmounted (offline until force-start-bricks).
	UnmountedBrickStarts float64
	// Version is the glusterd-version GET /version reports on a host whose
	// pod's image names no release (kubelink.BuildOfImage), such as the
	// pinned nightly image; "" means none, as a GD2 built without one.
	Version string
}

// orInstant maps a zero delay to sim.Instant: the simulator's own zero
// is GD2's realistic delay.
func orInstant(d time.Duration) time.Duration {
	if d == 0 {
		return sim.Instant
	}
	return d
}

// StartGD2Sim starts a simulator linked to cp's pods (all namespaces).
func (cp *ControlPlane) StartGD2Sim(ctx context.Context, o SimOptions) (*GD2Sim, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	secret := hex.EncodeToString(raw)
	s, err := sim.New(sim.Config{
		Secret: secret, Seed: o.Seed, WriteRate: o.WriteRate, HealRate: o.HealRate,
		DevicesPerPeer: o.DevicesPerPeer, DeviceSize: o.DeviceSize, StatePath: o.StatePath, StrictHosts: true,
		LivenessTTL: orInstant(o.LivenessTTL), BrickReconnect: orInstant(o.BrickReconnect), UnmountedBrickStarts: o.UnmountedBrickStarts,
		Version: o.Version,
	})
	if err != nil {
		return nil, err
	}
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return nil, err
	}
	g := &GD2Sim{Simulator: s, URL: "http://" + ln.Addr().String(), Secret: secret,
		srv: &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}}
	if o.TLS {
		g.TLS = &sim.TLSStats{}
		src := o.Certificates
		if src == nil {
			src = (&kubelink.Certificates{Client: cp.Client, Namespace: o.Namespace, Selector: GlusterPodSelector}).Source()
		}
		ln = sim.TLSListener(ln, sim.TLSConfig(src, g.TLS), g.TLS)
		g.srv.ErrorLog = sim.HandshakeErrorLog(g.TLS, nil)
		g.URL = "https://" + ln.Addr().String()
	}
	lctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.wg.Go(func() { _ = g.srv.Serve(ln) })
	g.wg.Go(func() {
		err := kubelink.Run(lctx, cp.Client, s, kubelink.Options{Namespace: o.Namespace, Selector: GlusterPodSelector, StartupDelay: o.StartupDelay, OnError: func(err error) { cp.logf("gd2sim link: %v", err) }})
		if err != nil && !errors.Is(err, context.Canceled) {
			cp.logf("gd2sim link stopped: %v", err)
		}
	})
	cp.logf("GD2 simulator at %s", g.URL)
	return g, nil
}

// Stop stops the HTTP server, the pod link and the simulator.
func (g *GD2Sim) Stop() {
	g.once.Do(func() {
		g.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.srv.Shutdown(ctx)
		g.wg.Wait()
		_ = g.Simulator.Close()
	})
}

// String describes the simulator for logs.
func (g *GD2Sim) String() string { return fmt.Sprintf("gd2sim(%s)", g.URL) }
