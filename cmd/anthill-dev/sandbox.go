package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
)

func init() {
	commands.Register("sandbox", cli.Command{Summary: "run a local sandbox: control plane, GD2 simulator, operator and a sample cluster (up|down)", Run: runSandbox})
}

const sandboxNamespace = "gluster"

// sandboxOptions are what `sandbox up` was asked for.
type sandboxOptions struct {
	// dir holds the sandbox's state, logs and kubeconfig.
	dir            string
	zones, perZone int
	glusterPerZone int32
	// anthill is the binary that runs the operator and the transition
	// stream; dev is this binary, which the walkthrough names for `sandbox
	// down`.
	anthill, dev string
	// realNode also starts a real node (framework.StartRealNode).
	realNode bool
}

func runSandbox(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	dir := fs.String("dir", ".sandbox", "directory for the sandbox's state, logs and kubeconfig")
	zones := fs.Int("zones", 3, "failure zones (one node template per zone in the sample cluster)")
	perZone := fs.Int("nodes-per-zone", 2, "fake Kubernetes nodes per zone")
	glusterPerZone := fs.Int("gluster-nodes", 2, "Gluster nodes per zone in the sample cluster (two: a decommission moves bricks to the other node of the zone)")
	realNode := fs.Bool("real-node", false, "also start a real node (kubelet, containerd, runc; needs root and Debian's containerd, runc and CNI plugins, and make realnode), tainted "+
		framework.RealNodeTaint.ToString()+", to run an image such as make image's there")
	anthill := fs.String("anthill", "", "the anthill binary that runs the operator and the transition stream; default the anthill next to this binary, else the one on PATH")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: anthill-dev sandbox up|down [flags]\n\n"+
			"up runs the sandbox until Ctrl-C or `anthill-dev sandbox down`; down stops the one running from --dir.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if len(args) == 0 || (args[0] != "up" && args[0] != "down") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fs.Usage()
			return flag.ErrHelp
		}
		return fmt.Errorf("usage: anthill-dev sandbox up|down [flags] (-h for the flags)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if args[0] == "down" {
		return sandboxDown(ctx, abs)
	}
	switch {
	case *zones < 1 || *zones > 3:
		// The sample cluster has three zone templates.
		return fmt.Errorf("--zones must be between 1 and 3, got %d", *zones)
	case *perZone < 1:
		return fmt.Errorf("--nodes-per-zone must be at least 1, got %d", *perZone)
	case *glusterPerZone < 1 || *glusterPerZone > *perZone*4:
		return fmt.Errorf("--gluster-nodes must be between 1 and %d (four disks per fake node), got %d", *perZone*4, *glusterPerZone)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bin, err := findAnthill(*anthill, self)
	if err != nil {
		return err
	}
	return sandboxUp(ctx, sandboxOptions{dir: abs, zones: *zones, perZone: *perZone, glusterPerZone: int32(*glusterPerZone), anthill: bin, dev: self, realNode: *realNode})
}

// findAnthill returns the anthill binary the sandbox runs: path when set,
// else the anthill next to self (make build puts both in bin/), else the
// one on PATH.
func findAnthill(path, self string) (string, error) {
	if path == "" {
		path = filepath.Join(filepath.Dir(self), "anthill")
		if _, err := os.Stat(path); err != nil {
			path = "anthill"
		}
	}
	found, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("no anthill binary to run the operator with (%v): run make build, or pass --anthill", err)
	}
	return filepath.Abs(found)
}

func pidFile(dir string) string { return filepath.Join(dir, "sandbox.pid") }

// sandboxUp runs until ctx ends (Ctrl-C, or `anthill-dev sandbox down`),
// then stops everything it started.
func sandboxUp(ctx context.Context, o sandboxOptions) error {
	dir, zones, perZone, glusterPerZone := o.dir, o.zones, o.perZone, o.glusterPerZone
	if pid, err := readPid(dir); err == nil && syscall.Kill(pid, 0) == nil {
		return fmt.Errorf("a sandbox is already running (pid %d); stop it with: %s sandbox down --dir %s", pid, o.dev, dir)
	}
	cpDir := filepath.Join(dir, "controlplane")
	if err := os.RemoveAll(cpDir); err != nil {
		return err
	}
	if err := os.MkdirAll(cpDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(pidFile(dir), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	defer os.Remove(pidFile(dir))

	say := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox: "+format+"\n", a...) }
	say("starting the control plane (%d zones, %d fake nodes each)", zones, perZone)
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cp, err := framework.Start(startCtx, framework.Options{Zones: zones, NodesPerZone: perZone, InstallCRDs: true, Dir: cpDir, KeepDir: true, Log: os.Stderr})
	if err != nil {
		return err
	}
	defer cp.Stop()
	if err := cp.CreateLocalStorage(startCtx, 4, "100Gi"); err != nil {
		return err
	}
	if o.realNode {
		node, err := cp.StartRealNode(startCtx, framework.RealNodeOptions{})
		if err != nil {
			return err
		}
		defer node.Stop()
		say("real node %s Ready at %s, tainted %s: pods that tolerate it (and select label %s=true) run there for real; "+
			"images are imported, never pulled: ctr --address %s -n k8s.io images import bin/image/anthill.tar; container logs in %s",
			node.Name, node.NodeIP, framework.RealNodeTaint.ToString(), framework.RealNodeLabel, node.Socket, filepath.Join(node.Dir, "pods"))
	}
	sim, err := cp.StartGD2Sim(startCtx, framework.SimOptions{Seed: time.Now().UnixNano(), WriteRate: sandboxWriteRate, HealRate: sandboxHealRate, StatePath: filepath.Join(dir, "gd2sim.json")})
	if err != nil {
		return err
	}
	defer sim.Stop()
	op, err := cp.StartOperator(startCtx, o.anthill)
	if err != nil {
		return err
	}
	defer op.Stop()
	say("operator running; its JSON log is in %s", strings.Join(op.LogPaths(), ", "))

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sandboxNamespace}}
	if _, err := cp.Client.CoreV1().Namespaces().Create(startCtx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := cp.CreateSimAuthSecret(startCtx, sandboxNamespace, "gluster", sim); err != nil {
		return err
	}
	cluster, err := framework.SampleCluster(sandboxNamespace, "gluster", sim, glusterPerZone)
	if err != nil {
		return err
	}
	cluster.Spec.NodeTemplates = cluster.Spec.NodeTemplates[:zones]
	ac, err := versioned.NewForConfig(cp.RestConfig)
	if err != nil {
		return err
	}
	if _, err := ac.OperatorV1alpha1().GlusterClusters(sandboxNamespace).Create(startCtx, cluster, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the sample cluster: %w", err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := copyFile(cp.Kubeconfig, kubeconfig); err != nil {
		return err
	}
	say("sample cluster %s/gluster created; streaming transitions (Ctrl-C stops the sandbox)", sandboxNamespace)

	streamErr := followTransitions(ctx, o.anthill, kubeconfig)
	want := int(glusterPerZone) * zones
	err = framework.WaitFor(ctx, 10*time.Minute, func(ctx context.Context) (bool, error) {
		nodes, err := framework.ClusterNodes(ctx, ac, sandboxNamespace, "gluster")
		if err != nil {
			return false, err
		}
		online := 0
		for _, n := range nodes {
			if n.Status.State == "Online" {
				online++
			}
		}
		return online == want, nil
	})
	if err != nil && ctx.Err() == nil {
		say("the sample cluster did not come up: %v (see the operator log)", err)
	} else if err == nil {
		w := walkthrough{
			online: want, kubeconfig: kubeconfig, admin: o.anthill, dev: o.dev, dir: dir,
		}
		// make build puts kubectl-gluster next to anthill-dev: the
		// walkthrough then shows the commands as the kubectl plugin.
		if plugin := filepath.Join(filepath.Dir(o.dev), "kubectl-gluster"); fileExists(plugin) {
			w.admin, w.pluginDir = "kubectl gluster", filepath.Dir(plugin)
		}
		if zones == 3 {
			g, gerr := gd2.New(gd2.Options{Endpoint: sim.URL, Secret: sim.Secret})
			if gerr == nil {
				w.layout, gerr = sandboxData(ctx, g, ac, say)
			}
			if gerr != nil && ctx.Err() == nil {
				say("the sample volumes could not be created: %v", gerr)
			}
			if gerr == nil {
				go watchBricks(ctx, g, 2*time.Second, say)
			}
		} else {
			say("no sample volumes: a replica-3 volume needs three zones (--zones 3)")
		}
		w.write(os.Stderr)
	}
	select {
	case <-ctx.Done():
		// The stream ends with ctx; let it go before what it watches.
		<-streamErr
	case err := <-streamErr:
		if err != nil && ctx.Err() == nil {
			say("transition stream ended: %v", err)
		}
		<-ctx.Done()
	}
	say("stopping the operator, the GD2 simulator and the control plane")
	return nil
}

// followTransitions runs `anthill transitions -f` on the sample cluster's
// namespace, the command an admin would run, writing onto this process's
// stdout and stderr until ctx ends. The channel yields how it ended: the
// error of its start or of its run.
func followTransitions(ctx context.Context, anthill, kubeconfig string) <-chan error {
	done := make(chan error, 1)
	cmd := exec.CommandContext(ctx, anthill, "transitions", "-f", "-n", sandboxNamespace, "--kubeconfig", kubeconfig)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// Stopped as Ctrl-C would stop it, so that it ends cleanly.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		done <- err
		return done
	}
	go func() { done <- cmd.Wait() }()
	return done
}

// sandboxDown asks a running sandbox to stop and waits until it has.
func sandboxDown(ctx context.Context, dir string) error {
	pid, err := readPid(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no sandbox is running from %s", dir)
	}
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		_ = os.Remove(pidFile(dir))
		return fmt.Errorf("sandbox process %d is gone (%v); removed its stale pid file", pid, err)
	}
	return framework.WaitFor(ctx, 2*time.Minute, func(context.Context) (bool, error) {
		return syscall.Kill(pid, 0) != nil, nil
	})
}

func readPid(dir string) (int, error) {
	b, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// sandboxData creates the sample volumes, turns on the simulator's write
// load, waits until the heal machine reports both volumes and returns
// where their bricks are.
func sandboxData(ctx context.Context, g *gd2.Client, ac versioned.Interface, say func(string, ...any)) ([]brickPlace, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := createSandboxVolumes(cctx, g); err != nil {
		return nil, err
	}
	layout, err := brickLayout(cctx, g)
	if err != nil {
		return nil, err
	}
	say("sample volumes %s and %s created and started; clients write %d entries/s to each replica set, self-heal drains %d/s per brick",
		sandboxReplicaVolume, sandboxDistRepVolume, sandboxWriteRate, sandboxHealRate)
	// The heal machine reads the volumes every 30 s; wait for it, so that
	// the printed status command shows them.
	err = framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		c, err := ac.OperatorV1alpha1().GlusterClusters(sandboxNamespace).Get(ctx, "gluster", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		seen := 0
		for _, v := range c.Status.Volumes {
			if (v.Name == sandboxReplicaVolume || v.Name == sandboxDistRepVolume) && v.State == "Healthy" {
				seen++
			}
		}
		return seen == 2, nil
	})
	if err != nil && ctx.Err() == nil {
		say("the heal machine has not reported the sample volumes Healthy yet: %v", err)
	}
	return layout, nil
}

// walkthrough is what the sandbox prints once the sample cluster is up:
// the volumes and their bricks, and the commands that move them.
type walkthrough struct {
	online     int
	kubeconfig string
	// admin runs the admin commands ("kubectl gluster", with pluginDir
	// put on the PATH, or the anthill binary), dev stops the sandbox.
	admin, pluginDir, dev string
	dir                   string
	layout                []brickPlace
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (w walkthrough) write(out io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nsandbox: all %d Gluster nodes are Online.\n", w.online)
	if len(w.layout) > 0 {
		b.WriteString("\nVolumes (created through GD2, with client writes running):\n")
		writeLayout(&b, w.layout)
	}
	ns, anthill := sandboxNamespace, w.admin
	fmt.Fprintf(&b, "\nIn another terminal:\n\n")
	fmt.Fprintf(&b, "  export KUBECONFIG=%s\n", w.kubeconfig)
	if w.pluginDir != "" {
		fmt.Fprintf(&b, "  export PATH=%s:$PATH            # kubectl finds the kubectl-gluster plugin there\n", w.pluginDir)
	}
	fmt.Fprintf(&b, "  kubectl get glusterclusters,glusternodes -n %s\n", ns)
	fmt.Fprintf(&b, "  %s transitions -f -n %s         # every transition, heals included\n", anthill, ns)
	fmt.Fprintf(&b, "  %s status gluster -n %s         # nodes, volumes and their heal state\n", anthill, ns)
	fmt.Fprintf(&b, "  %s node maintenance NODE -n %s  # then: node resume NODE\n", anthill, ns)
	if node, n := busiestNode(w.layout); node != "" {
		fmt.Fprintf(&b, "  %s node decommission %s -n %s\n", anthill, node, ns)
		fmt.Fprintf(&b, "      # %s holds %d brick(s); the plan shows where each would move, then asks (y)\n", node, n)
		b.WriteString("      # each brick is moved by replace-brick to another node and healed\n")
		b.WriteString("      # (\"sandbox: brick moved\" lines below; `status` shows the volumes HealPending -> Healing -> Healthy),\n")
		b.WriteString("      # then the node leaves the pool\n")
	} else {
		fmt.Fprintf(&b, "  %s node decommission NODE -n %s  # moves its bricks first, if it has any\n", anthill, ns)
	}
	fmt.Fprintf(&b, "  kubectl -n %s patch glustercluster gluster --type merge -p '{\"spec\":{\"gluster\":{\"version\":\"4.1.1\"}}}'\n", ns)
	b.WriteString("      # a rolling upgrade, one node at a time; each node waits for its bricks to heal\n")
	fmt.Fprintf(&b, "  %s sandbox down --dir %s\n\n", w.dev, w.dir)
	_, _ = io.WriteString(out, b.String())
}
