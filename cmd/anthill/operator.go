package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/machines"
	"github.com/gluster/anthill/kube/machines/heal"
	"github.com/gluster/anthill/kube/machines/node"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/kube/operator"
)

func init() {
	commands.Register("operator", cli.Command{Summary: "run the anthill operator", Run: runOperator})
}

// defaultWorkers is --workers' default. A sync waits on the API server and
// GD2 far more than it computes (the operator used a quarter of one core
// in a zone-batched upgrade), and every node of an upgrade batch holds a
// worker for the rounds that stop it (engine.Runner.Rounds): with eight,
// a batch of ten waited for workers the cluster's other machines held.
const defaultWorkers = 16

// operatorOptions are what anthill operator's flags set.
type operatorOptions struct {
	cfg      operator.Config
	qps      float64
	logLevel string
	images   objects.Images
}

// imageFlag is the operator's flag for the image named name in
// objects.Images.Named.
func imageFlag(name string) string { return name + "-image" }

// operatorFlags is the flag set of anthill operator, writing into o; the
// manifests' tests look the Deployment's arguments up in it.
func operatorFlags(o *operatorOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	cfg := &o.cfg
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig file; empty means in-cluster configuration")
	fs.StringVar(&cfg.MetricsAddress, "metrics-address", ":8080", "address serving /healthz, /readyz and /metrics")
	fs.BoolVar(&cfg.Profiling, "profiling", false, "also serve Go's runtime profiles (heap, goroutines, CPU) under /debug/pprof/ on --metrics-address")
	fs.IntVar(&cfg.Workers, "workers", defaultWorkers, "dispatcher workers (machines advanced in parallel); keep it above an upgrade's maxParallel, whose nodes each hold one while they stop")
	fs.Float64Var(&o.qps, "kube-api-qps", 50, "Kubernetes API requests per second the operator may send")
	fs.IntVar(&cfg.KubeBurst, "kube-api-burst", 100, "burst of Kubernetes API requests above --kube-api-qps")
	fs.DurationVar(&cfg.ResyncPeriod, "resync", 10*time.Minute, "informer resync period")
	fs.BoolVar(&cfg.LeaderElect, "leader-elect", false, "elect a leader on a Lease before acting (set when running more than one replica)")
	fs.StringVar(&cfg.LeaseNamespace, "leader-election-namespace", "anthill-system", "namespace of the leader-election Lease")
	fs.StringVar(&cfg.LeaseName, "leader-election-name", "anthill-operator", "name of the leader-election Lease")
	fs.StringVar(&cfg.Identity, "identity", "", "leader-election identity; default the host name")
	fs.DurationVar(&cfg.LeaseDuration, "leader-election-lease-duration", operator.DefaultLeaseDuration,
		"how long a standby waits after the leader's last renewal before taking the Lease over")
	fs.DurationVar(&cfg.RenewDeadline, "leader-election-renew-deadline", operator.DefaultRenewDeadline,
		"how long the leader keeps trying to renew before it gives up leading (and exits)")
	fs.DurationVar(&cfg.RetryPeriod, "leader-election-retry-period", operator.DefaultRetryPeriod,
		"how often the leader renews the Lease (one API write each) and a standby tries to take it")
	fs.DurationVar(&cfg.GD2Timeout, "gd2-timeout", 30*time.Second, "timeout of one GD2 request")
	fs.DurationVar(&cfg.GD2ListInterval, "gd2-list-interval", effects.DefaultPoolViewTTL,
		fmt.Sprintf("how long the syncs of one cluster share its GD2 peer list (at most half the cluster's shorter liveness window for its nodes' liveness clocks, which is also how often the peer watch reads it); its device and volume lists are shared %d times as long (a decision that acts always reads them live)", effects.ConfigListFactor))
	fs.DurationVar(&cfg.HealInterval, "heal-interval", heal.DefaultHealInterval,
		"how often each cluster's volumes are re-read for their heal state (GD2 heal-info, one call a volume)")
	fs.DurationVar(&cfg.LostNodeGrace, "lost-node-grace", node.DefaultLostNodeGrace,
		"how long a Kubernetes node must have been lost (not Ready) before a Gluster pod stuck terminating on it is force-deleted, when its storage can follow it (docs/failure.md)")
	fs.DurationVar(&cfg.MaxWait, "max-wait", 0,
		"the longest a machine waiting on a slow process (a heal, a restart, a peer) goes before looking again; 0 keeps each machine's own interval (15 s to 10 min). Decisions read the clock, so this changes when a wait is noticed to be over, never what is decided")
	fs.Var((*namespaceList)(&cfg.Namespaces), "watch-namespace",
		"run only the GlusterClusters of this namespace (comma-separated, or the flag repeated, for several); default every namespace. A namespaced install's RBAC: docs/rbac.md")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	// One flag per image the builders default to (docs/install.md,
	// "Images anthill runs"); the GD2 image is each cluster's own.
	o.images = objects.DefaultImages
	for _, n := range o.images.Named() {
		if n[0] == objects.NameGD2Image {
			continue
		}
		f, _ := o.images.Field(n[0])
		usage := "image of " + n[0] + " for the pods the operator creates from now on"
		if n[0] == "glusterfs-csi-driver" {
			usage += " (a cluster's spec.csi.fileImage wins)"
		}
		fs.StringVar(f, imageFlag(n[0]), n[1], usage)
	}
	return fs
}

func runOperator(ctx context.Context, args []string) error {
	var o operatorOptions
	fs := operatorFlags(&o)
	cfg, qps, logLevel := &o.cfg, &o.qps, &o.logLevel
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if cfg.Workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d", cfg.Workers)
	}
	if *qps <= 0 || cfg.KubeBurst < 1 {
		return fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive, got %v and %d", *qps, cfg.KubeBurst)
	}
	cfg.KubeQPS = float32(*qps)
	if cfg.GD2ListInterval <= 0 {
		return fmt.Errorf("--gd2-list-interval must be positive, got %s", cfg.GD2ListInterval)
	}
	// client-go's own checks, made here so that a bad value is an error
	// rather than a panic once the informers have synced.
	if cfg.RetryPeriod <= 0 || float64(cfg.RenewDeadline) <= 1.2*float64(cfg.RetryPeriod) || cfg.LeaseDuration <= cfg.RenewDeadline {
		return fmt.Errorf("--leader-election-lease-duration (%s) must exceed --leader-election-renew-deadline (%s), which must exceed 1.2 times --leader-election-retry-period (%s), which must be positive",
			cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod)
	}
	if cfg.HealInterval <= 0 || cfg.MaxWait < 0 {
		return fmt.Errorf("--heal-interval must be positive and --max-wait not negative, got %s and %s", cfg.HealInterval, cfg.MaxWait)
	}
	if cfg.LostNodeGrace <= 0 {
		return fmt.Errorf("--lost-node-grace must be positive, got %s", cfg.LostNodeGrace)
	}
	if err := machines.ValidateWatchNamespaces(cfg.Namespaces); err != nil {
		return fmt.Errorf("--watch-namespace: %w", err)
	}
	if cfg.ResyncPeriod <= 0 {
		return fmt.Errorf("--resync must be positive, got %s", cfg.ResyncPeriod)
	}
	for _, n := range o.images.Named() {
		if n[0] != objects.NameGD2Image && strings.TrimSpace(n[1]) == "" {
			return fmt.Errorf("--%s must name an image", imageFlag(n[0]))
		}
	}
	if err := objects.UseImages(o.images); err != nil {
		return err
	}
	log, err := operator.NewLogger(*logLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	defer func() { _ = log.Sync() }()
	log.Info("anthill operator starting", zap.String("version", cli.Version))
	err = operator.Run(ctx, *cfg, log)
	if ctx.Err() != nil {
		log.Info("anthill operator stopped")
		return nil
	}
	return err
}

// namespaceList is --watch-namespace: namespaces separated by commas, the
// flag repeated adds more.
type namespaceList []string

func (l *namespaceList) String() string { return strings.Join(*l, ",") }

func (l *namespaceList) Set(v string) error {
	for _, ns := range strings.Split(v, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			*l = append(*l, ns)
		}
	}
	return nil
}
