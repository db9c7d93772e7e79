package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	operatorv1alpha1client "github.com/gluster/anthill/kube/client/clientset/versioned/typed/operator/v1alpha1"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillscheme "github.com/gluster/anthill/kube/client/clientset/versioned/scheme"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// This file runs the admin commands (node, transitions, status) as the
// real kubectl-gluster binary against the real API server, with the Events recorded by the
// operator's own engine.TransitionLog — the contract between the operator's
// writer and the CLI's reader is tested end to end, not restated.

// cliResult is one finished run of the binary.
type cliResult struct {
	stdout, stderr string
	err            error
}

func (r cliResult) String() string {
	return fmt.Sprintf("err=%v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
}

// cliRunner runs a binary (kubectl-gluster, anthill) with arguments.
type cliRunner struct {
	bin string
}

func (c cliRunner) run(ctx context.Context, env []string, args ...string) cliResult {
	return c.runInput(ctx, env, "", args...)
}

// runInput runs the binary with stdin reading input.
func (c cliRunner) runInput(ctx context.Context, env []string, input string, args ...string) cliResult {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return cliResult{stdout: out.String(), stderr: errOut.String(), err: err}
}

// lockedBuffer collects the output of a running process for polling.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// loadSample decodes the one document of manifests/samples/file into obj.
func loadSample(t *testing.T, file string, obj any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
}

// operatorRecorder records Events exactly as the operator's wiring does:
// the core/v1 recorder, component anthill, anthill's types in the scheme.
func operatorRecorder(t *testing.T) *engine.TransitionLog {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := anthillscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	bc := record.NewBroadcaster()
	t.Cleanup(bc.Shutdown)
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: env.Client.CoreV1().Events("")})
	return &engine.TransitionLog{
		Log: zap.NewNop(), Recorder: bc.NewRecorder(scheme, corev1.EventSource{Component: "anthill"}),
		Events: &engine.TransitionEvents{Client: operatorKube(t).CoreV1(), Scheme: scheme, Log: zap.NewNop()},
	}
}

// operatorKube is a Kubernetes client with the operator's default request
// rate (--kube-api-qps 50, --kube-api-burst 100).
func operatorKube(t *testing.T) kubernetes.Interface {
	t.Helper()
	rc := rest.CopyConfig(env.RestConfig)
	rc.QPS, rc.Burst = 50, 100
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// newCLIFixture takes the plugin binary make test built and creates the
// sample GlusterCluster and GlusterNode in a fresh namespace: what the
// command line tests run against, with a context that ends with the test.
func newCLIFixture(t *testing.T) (context.Context, cliRunner, string, string, operatorv1alpha1client.OperatorV1alpha1Interface, *operatorv1alpha1.GlusterCluster, *operatorv1alpha1.GlusterNode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cli := cliRunner{bin: framework.KubectlGlusterBinary.For(t)}
	ns := env.Namespace(t)
	ac := operatorClient(t).OperatorV1alpha1()
	var cluster operatorv1alpha1.GlusterCluster
	loadSample(t, "glustercluster.yaml", &cluster)
	var node operatorv1alpha1.GlusterNode
	loadSample(t, "glusternode.yaml", &node)
	createdCluster, err := ac.GlusterClusters(ns).Create(ctx, &cluster, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the sample GlusterCluster: %v", err)
	}
	createdNode, err := ac.GlusterNodes(ns).Create(ctx, &node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the sample GlusterNode: %v", err)
	}
	return ctx, cli, "--kubeconfig=" + env.Kubeconfig, ns, ac, createdCluster, createdNode
}

func TestCLI(t *testing.T) {
	ctx, cli, kc, ns, ac, createdCluster, createdNode := newCLIFixture(t)

	t.Run("node maintenance sets the request annotation", func(t *testing.T) {
		r := cli.run(ctx, nil, "node", "maintenance", createdNode.Name, "-n", ns, kc)
		if r.err != nil {
			t.Fatalf("kubectl gluster node maintenance: %s", r)
		}
		t.Logf("kubectl gluster node maintenance:\n%s", r.stdout)
		if !strings.Contains(r.stdout, "requested maintenance") || !strings.Contains(r.stdout, "watch with: kubectl gluster transitions -f -n "+ns) {
			t.Errorf("output lacks what was done or the hint:\n%s", r.stdout)
		}
		got, err := ac.GlusterNodes(ns).Get(ctx, createdNode.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v := got.Annotations[objects.AnnotationRequest]; v != objects.RequestMaintenance {
			t.Errorf("annotation %s = %q, want %q", objects.AnnotationRequest, v, objects.RequestMaintenance)
		}
	})

	t.Run("node rejects an unknown action and a missing node", func(t *testing.T) {
		r := cli.run(ctx, nil, "node", "drain", createdNode.Name, "-n", ns, kc)
		if r.err == nil || !strings.Contains(r.stderr, "valid actions: decommission, maintenance, resume") {
			t.Errorf("kubectl gluster node drain should fail listing the actions: %s", r)
		}
		r = cli.run(ctx, nil, "node", "resume", "no-such-node", "-n", ns, kc)
		if r.err == nil || !strings.Contains(r.stderr, `GlusterNode "no-such-node" not found in namespace `+ns) {
			t.Errorf("kubectl gluster node resume of a missing node should fail naming it: %s", r)
		}
	})

	tlog := operatorRecorder(t)
	now := time.Now()
	tlog.Announce(createdNode, engine.Committed{
		Machine: states.NodeMachine, Namespace: ns, Name: createdNode.Name,
		From: fsm.State("Online"), To: fsm.State("Maintenance"), Event: fsm.Event("requestMaintenance"),
		Reason: "MaintenanceRequested", Message: "admin request", Time: now,
	})
	tlog.Announce(createdCluster, engine.Committed{
		Machine: states.HealMachine, Namespace: ns, Name: createdCluster.Name, Subject: "vol1",
		From: fsm.State("Healthy"), To: fsm.State("HealPending"), Event: fsm.Event("healNeeded"),
		Reason: "HealNeeded", Message: "3 entries", Time: now,
	})
	tlog.Warn(createdNode, "ActionFailed", "drain failed: replace-brick refused")
	nodeLine := "GlusterNode/" + createdNode.Name + "  Online -> Maintenance  (requestMaintenance)  MaintenanceRequested: admin request"
	healLine := "GlusterCluster/" + createdCluster.Name + "  heal vol1: Healthy -> HealPending  (healNeeded)  HealNeeded: 3 entries"
	warnLine := "GlusterNode/" + createdNode.Name + "  WARNING  ActionFailed: drain failed: replace-brick refused"

	t.Run("transitions prints the recorded transitions", func(t *testing.T) {
		var last cliResult
		// The recorder writes asynchronously; poll until all three arrived.
		err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			last = cli.run(ctx, nil, "transitions", createdCluster.Name, "-n", ns, kc)
			if last.err != nil {
				return false, fmt.Errorf("kubectl gluster transitions: %s", last)
			}
			return strings.Count(last.stdout, "\n") >= 3, nil
		})
		if err != nil {
			t.Fatalf("%v\nlast run: %s", err, last)
		}
		t.Logf("kubectl gluster transitions %s -n %s:\n%s", createdCluster.Name, ns, last.stdout)
		for _, want := range []string{nodeLine, healLine, warnLine} {
			if !strings.Contains(last.stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, last.stdout)
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(last.stdout), "\n") {
			stamp, _, _ := strings.Cut(line, "  ")
			if _, err := time.Parse(time.RFC3339, stamp); err != nil {
				t.Errorf("line %q does not start with an RFC 3339 time: %v", line, err)
			}
		}
		other := cli.run(ctx, nil, "transitions", "another-cluster", "-n", ns, kc)
		if other.err != nil || other.stdout != "" {
			t.Errorf("transitions another-cluster should print nothing: %s", other)
		}
	})

	t.Run("transitions -f follows new transitions until interrupted", func(t *testing.T) {
		var out, errOut lockedBuffer
		cmd := exec.CommandContext(ctx, cli.bin, "transitions", "-f", "-n", ns, kc)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		defer func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
			}
		}()
		waitOutput := func(want string) {
			t.Helper()
			err := framework.WaitFor(ctx, time.Minute, func(context.Context) (bool, error) {
				return strings.Contains(out.String(), want), nil
			})
			if err != nil {
				t.Fatalf("waiting for %q: %v\nstdout:\n%s\nstderr:\n%s", want, err, out.String(), errOut.String())
			}
		}
		waitOutput(nodeLine)
		tlog.Announce(createdNode, engine.Committed{
			Machine: states.NodeMachine, Namespace: ns, Name: createdNode.Name,
			From: fsm.State("Maintenance"), To: fsm.State("Online"), Event: fsm.Event("resume"),
			Reason: "ResumeRequested", Message: "admin resumed", Time: time.Now(),
		})
		waitOutput("Maintenance -> Online  (resume)  ResumeRequested: admin resumed")
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("kubectl gluster transitions -f ended with %v after SIGINT, want exit 0; stderr:\n%s", err, errOut.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("kubectl gluster transitions -f did not stop on SIGINT")
		}
		if n := strings.Count(out.String(), nodeLine); n != 1 {
			t.Errorf("the first transition was printed %d times, want once:\n%s", n, out.String())
		}
	})

	t.Run("status prints phase, nodes and history", func(t *testing.T) {
		c, err := ac.GlusterClusters(ns).Get(ctx, createdCluster.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Status.Phase = "Degraded"
		c.Status.Nodes = operatorv1alpha1.NodeCounts{Desired: 3, Total: 1}
		c.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "vol1", State: "HealPending", PendingEntries: 3}}
		c.Status.History = []operatorv1alpha1.TransitionRecord{{
			Time: metav1.Now(), Machine: states.ClusterMachine, From: "Ready", To: "Degraded", Event: "nodeDown", Reason: "NodesOffline",
		}}
		if _, err := ac.GlusterClusters(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update cluster status: %v", err)
		}
		n, err := ac.GlusterNodes(ns).Get(ctx, createdNode.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.State, n.Status.PeerID, n.Status.Message = "Maintenance", "peer-1", "in maintenance by request"
		if _, err := ac.GlusterNodes(ns).UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update node status: %v", err)
		}

		// KUBECONFIG instead of the flag: the CLI loads configuration as
		// kubectl does.
		r := cli.run(ctx, []string{"KUBECONFIG=" + env.Kubeconfig}, "status", createdCluster.Name, "-n", ns)
		if r.err != nil {
			t.Fatalf("kubectl gluster status: %s", r)
		}
		t.Logf("kubectl gluster status %s -n %s:\n%s", createdCluster.Name, ns, r.stdout)
		for _, want := range []string{
			"Phase:    Degraded\n",
			"Nodes: 0 online, 1 total, 3 desired\n",
			// No GD2 version read yet: "-".
			createdNode.Name + "  zone-1  Maintenance  peer-1  -            in maintenance by request\n",
			"vol1  HealPending  3",
			"GlusterCluster/" + createdCluster.Name + "  Ready -> Degraded  (nodeDown)  NodesOffline\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("status output lacks %q:\n%s", want, r.stdout)
			}
		}
		missing := cli.run(ctx, nil, "status", "no-such-cluster", "-n", ns, kc)
		var exit *exec.ExitError
		if !errors.As(missing.err, &exit) || exit.ExitCode() != 1 || !strings.Contains(missing.stderr, `GlusterCluster "no-such-cluster" not found`) {
			t.Errorf("status of a missing cluster should exit 1 naming it: %s", missing)
		}
	})
}
