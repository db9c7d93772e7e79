package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
)

// TestSandbox runs the README's main command as a user would: `anthill
// sandbox up` starts its own control plane, simulator, operator and sample
// cluster; the test then follows the commands it prints (maintenance and
// resume of a node, the upgrade patch) through the sandbox's kubeconfig,
// and `anthill sandbox down` stops everything.
func TestSandbox(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin := buildAnthill(ctx, t)
	dir := t.TempDir()
	var out, errOut lockedBuffer
	up := exec.Command(bin, "sandbox", "up", "--dir", dir)
	up.Stdout, up.Stderr = &out, &errOut
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- up.Wait() }()
	down := func() error {
		// Not ctx: a cleanup runs after the test's deferred cancel.
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer dcancel()
		if r := (cliRunner{bin: bin}).run(dctx, nil, "sandbox", "down", "--dir", dir); r.err != nil {
			return fmt.Errorf("sandbox down: %s", r)
		}
		select {
		case err := <-exited:
			return err
		case <-time.After(time.Minute):
			return fmt.Errorf("sandbox up still running a minute after sandbox down")
		}
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			if err := down(); err != nil {
				t.Error(err)
				_ = up.Process.Kill()
			}
		}
	})
	waitFor := func(what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		err := framework.WaitFor(ctx, timeout, func(ctx context.Context) (bool, error) {
			select {
			case err := <-exited:
				stopped = true
				return false, fmt.Errorf("sandbox up exited: %v", err)
			default:
			}
			return cond(ctx)
		})
		if err != nil {
			t.Fatalf("waiting for %s: %v\nsandbox stderr:\n%s\nsandbox stdout:\n%s", what, err, errOut.String(), out.String())
		}
	}

	waitFor("the sample cluster to come up", 4*time.Minute, func(context.Context) (bool, error) {
		return strings.Contains(errOut.String(), "all 3 Gluster nodes are Online"), nil
	})
	// The stream follows Events, which arrive shortly after the state the
	// sandbox waited for.
	var online [][]string
	waitFor("the transition stream to show each node going Online", 30*time.Second, func(context.Context) (bool, error) {
		online = regexp.MustCompile(`GlusterNode/(\S+)\s+Joining -> Online`).FindAllStringSubmatch(out.String(), -1)
		return len(online) == 3, fmt.Errorf("%d nodes seen going Joining -> Online, want 3", len(online))
	})

	kubeconfig := filepath.Join(dir, "kubeconfig")
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := versioned.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	cli := cliRunner{bin: bin}
	kcEnv := []string{"KUBECONFIG=" + kubeconfig}
	nodeState := func(name, want string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			n, err := ac.OperatorV1alpha1().GlusterNodes("gluster").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return n.Status.State == want, fmt.Errorf("node %s is %s", name, n.Status.State)
		}
	}
	node := online[0][1]
	if r := cli.run(ctx, kcEnv, "node", "maintenance", node, "-n", "gluster"); r.err != nil {
		t.Fatalf("node maintenance: %s", r)
	}
	waitFor("node "+node+" in Maintenance", time.Minute, nodeState(node, "Maintenance"))
	if r := cli.run(ctx, kcEnv, "node", "resume", node, "-n", "gluster"); r.err != nil {
		t.Fatalf("node resume: %s", r)
	}
	waitFor("node "+node+" Online again", time.Minute, nodeState(node, "Online"))

	// The upgrade patch the sandbox prints, as kubectl would send it.
	patch := regexp.MustCompile(`patch glustercluster gluster --type merge -p '([^']+)'`).FindStringSubmatch(errOut.String())
	if patch == nil {
		t.Fatalf("the sandbox printed no upgrade patch:\n%s", errOut.String())
	}
	if _, err := ac.OperatorV1alpha1().GlusterClusters("gluster").Patch(ctx, "gluster", types.MergePatchType, []byte(patch[1]), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the upgrade to complete", 3*time.Minute, func(ctx context.Context) (bool, error) {
		c, err := ac.OperatorV1alpha1().GlusterClusters("gluster").Get(ctx, "gluster", metav1.GetOptions{})
		if err != nil || c.Status.Upgrade == nil {
			return false, err
		}
		return c.Status.Upgrade.State == "Complete", fmt.Errorf("upgrade %s: %s", c.Status.Upgrade.State, c.Status.Upgrade.Message)
	})
	waitFor("the transition stream to show each node's upgrade", 30*time.Second, func(context.Context) (bool, error) {
		for _, n := range online {
			if !strings.Contains(out.String(), "GlusterNode/"+n[1]+"  Online -> Quiescing  (upgrade)") {
				return false, fmt.Errorf("no upgrade of %s in the stream yet", n[1])
			}
		}
		return true, nil
	})
	if r := cli.run(ctx, kcEnv, "status", "gluster", "-n", "gluster"); r.err != nil || !strings.Contains(r.stdout, "gluster") {
		t.Errorf("anthill status: %s", r)
	}

	logs, _ := filepath.Glob(filepath.Join(dir, "controlplane", "operator-*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), framework.RBACDenied) {
			t.Errorf("the sandbox's operator was denied a request by its RBAC (see %s)", l)
		}
	}
	if len(logs) == 0 {
		t.Error("no operator log in the sandbox directory")
	}

	stopped = true
	if err := down(); err != nil {
		t.Fatalf("%v\nsandbox stderr:\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "stopping the operator, the GD2 simulator and the control plane") {
		t.Errorf("sandbox up did not say it stopped:\n%s", errOut.String())
	}
}
