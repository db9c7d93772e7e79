package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/gd2/sim/kubelink"
)

func init() {
	commands.Register("gd2sim", cli.Command{Summary: "run the GD2 REST simulator (or 'gd2sim token METHOD PATH')", Run: runGD2Sim})
}

const defaultSecretFile = "gd2sim.auth"

func runGD2Sim(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "token" {
		return runGD2SimToken(args[1:])
	}
	fs := flag.NewFlagSet("gd2sim", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:24007", "address to serve GD2's REST API on")
	secretFile := fs.String("secret-file", defaultSecretFile, "GD2 auth secret (64 hex); created with a random secret if absent")
	noAuth := fs.Bool("no-auth", false, "serve without JWT auth (GD2 restauth=false)")
	peers := fs.Int("peers", -1, "members to pre-create (default 3, or 0 with -kubeconfig)")
	zones := fs.Int("zones", 3, "zones the pre-created members spread over (0 = each peer its own zone)")
	devices := fs.Int("devices", 2, "devices each host offers (/dev/sdb, /dev/sdc, ...)")
	deviceSize := fs.String("device-size", "100Gi", "size of each device (bytes or Ki/Mi/Gi/Ti suffix)")
	writeRate := fs.Float64("write-rate", 10, "client writes per replica set, heal entries per second")
	healRate := fs.Float64("heal-rate", 50, "self-heal drain per brick, entries per second")
	seed := fs.Int64("seed", 1, "seed for ids, random orders and fault decisions")
	faults := fs.String("faults", "none", "fault profile: none, flaky, chaos, or error=R,conflict=R,hang=R,latency=D,hangfor=D,healtrigger=R")
	livenessTTL := fs.Duration("liveness-ttl", 30*time.Second, "how long a crashed GD2 still shows online to its peers (GD2's etcd session TTL; 0 = at once)")
	brickReconnect := fs.Duration("brick-reconnect", 30*time.Second, "how long a restarted GD2's bricks stay unreachable to clients and heal-info (0 = at once)")
	unmounted := fs.Float64("unmounted-brick-starts", 0, "probability that a restarting GD2 starts its bricks before mounting them (offline until force-start-bricks)")
	state := fs.String("state", "", "JSON file that keeps the cluster across restarts (empty = none)")
	kubeconfig := fs.String("kubeconfig", "", "link host liveness to Ready pods through this kubeconfig")
	namespace := fs.String("namespace", "", "namespace of the GD2 pods (with -kubeconfig; empty = all)")
	selector := fs.String("selector", "", "label selector of the GD2 pods (with -kubeconfig)")
	ver := fs.String("gd2-version", "v6.0-sim", "glusterd-version reported by /version")
	tlsCert := fs.String("tls-cert", "", "serve TLS only (min 1.2) with this PEM certificate (with -tls-key)")
	tlsKey := fs.String("tls-key", "", "PEM private key of -tls-cert")
	tlsPods := fs.Bool("tls-from-pods", false, "serve TLS only, each pod's certificate from the Secret its GD2_CERT_FILE and GD2_KEY_FILE are mounted from (with -kubeconfig)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	size, err := parseBytes(*deviceSize)
	if err != nil {
		return fmt.Errorf("-device-size: %w", err)
	}
	fp, err := parseFaults(*faults)
	if err == nil {
		err = fp.Validate()
	}
	if err != nil {
		return fmt.Errorf("-faults: %w", err)
	}
	if *peers < -1 {
		return fmt.Errorf("-peers must not be negative")
	}
	if *peers == -1 {
		*peers = 3
		if *kubeconfig != "" {
			*peers = 0
		}
	}
	if *kubeconfig != "" && *peers != 0 {
		return fmt.Errorf("-peers must be 0 with -kubeconfig: hosts come from Ready pods")
	}
	if *kubeconfig == "" && (*namespace != "" || *selector != "") {
		return fmt.Errorf("-namespace and -selector need -kubeconfig")
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return fmt.Errorf("-tls-cert and -tls-key go together")
	}
	if *tlsPods && (*kubeconfig == "" || *tlsCert != "") {
		return fmt.Errorf("-tls-from-pods needs -kubeconfig and excludes -tls-cert")
	}
	if *devices < 1 {
		return fmt.Errorf("-devices must be at least 1")
	}
	secret := ""
	if !*noAuth {
		if secret, err = loadOrCreateSecret(*secretFile); err != nil {
			return fmt.Errorf("-secret-file: %w", err)
		}
	}
	s, err := sim.New(sim.Config{
		Secret: secret, Seed: *seed, Peers: *peers, Zones: *zones,
		DevicesPerPeer: *devices, DeviceSize: size, WriteRate: *writeRate, HealRate: *healRate,
		StatePath: *state, Faults: fp, StrictHosts: *kubeconfig != "", Version: *ver,
		LivenessTTL: instantIfZero(*livenessTTL), BrickReconnect: instantIfZero(*brickReconnect), UnmountedBrickStarts: *unmounted,
	})
	if err != nil {
		return err
	}
	defer s.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	linkErr := make(chan error, 1)
	var certs sim.CertSource
	if *tlsCert != "" {
		if certs, err = sim.StaticCert(*tlsCert, *tlsKey); err != nil {
			return fmt.Errorf("-tls-cert: %w", err)
		}
	}
	if *kubeconfig != "" {
		rc, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
		if err != nil {
			return fmt.Errorf("-kubeconfig: %w", err)
		}
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return fmt.Errorf("-kubeconfig: %w", err)
		}
		if *tlsPods {
			certs = (&kubelink.Certificates{Client: cs, Namespace: *namespace, Selector: *selector}).Source()
		}
		go func() {
			linkErr <- kubelink.Run(ctx, cs, s, kubelink.Options{
				Namespace: *namespace, Selector: *selector, Resync: time.Minute,
				OnError: func(err error) { fmt.Fprintf(os.Stderr, "gd2sim: pod link: %v\n", err) },
			})
		}()
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	// GD2's own server limits: 10 s read, 30 s write, 8 KiB of headers.
	srv := &http.Server{Handler: s.Handler(), ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, MaxHeaderBytes: 8 << 10}
	scheme := "http"
	if certs != nil {
		scheme = "https"
		stats := &sim.TLSStats{}
		srv.ErrorLog = sim.HandshakeErrorLog(stats, os.Stderr)
		ln = sim.TLSListener(ln, sim.TLSConfig(certs, stats), stats)
	}
	if secret != "" {
		fmt.Printf("gd2sim: listening on %s://%s (secret file %s)\n", scheme, ln.Addr(), *secretFile)
	} else {
		fmt.Printf("gd2sim: listening on %s://%s (auth off)\n", scheme, ln.Addr())
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return err
	case err := <-linkErr:
		if err != nil {
			_ = srv.Close()
			return err
		}
	}
	shutdownCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	_ = srv.Shutdown(shutdownCtx)
	return s.Close()
}

// runGD2SimToken prints a bearer token valid for one METHOD and PATH.
func runGD2SimToken(args []string) error {
	fs := flag.NewFlagSet("gd2sim token", flag.ContinueOnError)
	secretFile := fs.String("secret-file", defaultSecretFile, "GD2 auth secret file")
	ttl := fs.Duration("ttl", 120*time.Second, "token lifetime")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("usage: anthill-dev gd2sim token [-secret-file F] [-ttl D] METHOD PATH")
	}
	b, err := os.ReadFile(*secretFile)
	if err != nil {
		return fmt.Errorf("-secret-file: %w", err)
	}
	path := fs.Arg(1)
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i] // the qsh claim never covers the query
	}
	tok, err := sim.Token(strings.TrimSpace(string(b)), strings.ToUpper(fs.Arg(0)), path, time.Now(), *ttl)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

// loadOrCreateSecret reads GD2's secret file, or writes a fresh random one
// the way GD2 does at first start (64 lowercase hex, no newline, 0640).
func loadOrCreateSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		s := strings.TrimSpace(string(b))
		if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
			return "", fmt.Errorf("%s: not 64 lowercase hex characters", path)
		}
		return s, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	s := hex.EncodeToString(raw[:])
	if err := os.WriteFile(path, []byte(s), 0o640); err != nil {
		return "", err
	}
	return s, nil
}

func parseBytes(s string) (uint64, error) {
	mult := uint64(1)
	for suffix, m := range map[string]uint64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("want a positive size such as 100Gi, got %q", s)
	}
	return n * mult, nil
}

// instantIfZero maps a flag's 0 (at once) to sim.Instant, whose Config
// zero is GD2's realistic delay.
func instantIfZero(d time.Duration) time.Duration {
	if d <= 0 {
		return sim.Instant
	}
	return d
}

// parseFaults reads a named profile or a key=value list.
func parseFaults(s string) (sim.Faults, error) {
	switch s {
	case "", "none":
		return sim.Faults{}, nil
	case "flaky":
		return sim.Faults{ErrorRate: 0.05, ConflictRate: 0.05, Latency: 50 * time.Millisecond}, nil
	case "chaos":
		return sim.ChaosFaults(), nil
	}
	var f sim.Faults
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return f, fmt.Errorf("%q is not key=value (or a profile: none, flaky, chaos)", kv)
		}
		var err error
		switch k {
		case "error":
			f.ErrorRate, err = strconv.ParseFloat(v, 64)
		case "conflict":
			f.ConflictRate, err = strconv.ParseFloat(v, 64)
		case "hang":
			f.HangRate, err = strconv.ParseFloat(v, 64)
		case "latency":
			f.Latency, err = time.ParseDuration(v)
		case "hangfor":
			f.HangFor, err = time.ParseDuration(v)
		case "healtrigger":
			f.HealTriggerFailRate, err = strconv.ParseFloat(v, 64)
		default:
			return f, fmt.Errorf("unknown key %q (error, conflict, hang, latency, hangfor, healtrigger)", k)
		}
		if err != nil {
			return f, fmt.Errorf("%s: %w", k, err)
		}
	}
	return f, nil
}
