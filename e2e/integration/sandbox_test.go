package integration

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
)

// TestSandbox runs the README's main command as a user would: `anthill-dev
// sandbox up` starts its own control plane, simulator, operator and sample
// cluster with two sample volumes; the test checks the volumes exist and
// are Healthy, then follows the commands it prints (maintenance and resume
// of a node, the decommission of a node holding bricks, which must move
// them to other nodes and heal them, the upgrade patch) through the
// sandbox's kubeconfig, and `anthill-dev sandbox down` stops everything.
func TestSandbox(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute)
	defer cancel()
	// anthill-dev finds anthill and kubectl-gluster next to it, as in
	// bin/; make test builds the three into one directory.
	bin, dev, plugin := framework.AnthillBinary.For(t), framework.AnthillDevBinary.For(t), framework.KubectlGlusterBinary.For(t)
	if filepath.Dir(bin) != filepath.Dir(dev) || filepath.Dir(plugin) != filepath.Dir(dev) {
		t.Fatalf("anthill (%s), kubectl-gluster (%s) and anthill-dev (%s) are not in one directory, as make build and make test put them", bin, plugin, dev)
	}
	dir := t.TempDir()
	var out, errOut lockedBuffer
	up := exec.Command(dev, "sandbox", "up", "--dir", dir)
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
		if r := (cliRunner{bin: dev}).run(dctx, nil, "sandbox", "down", "--dir", dir); r.err != nil {
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

	waitFor("the sample cluster to come up with its volumes", 6*time.Minute, func(context.Context) (bool, error) {
		return strings.Contains(errOut.String(), "all 6 Gluster nodes are Online") && strings.Contains(errOut.String(), "sandbox down --dir"), nil
	})
	walk := errOut.String()
	// The stream follows Events, which arrive shortly after the state the
	// sandbox waited for.
	var online [][]string
	waitFor("the transition stream to show each node going Online", 30*time.Second, func(context.Context) (bool, error) {
		online = regexp.MustCompile(`GlusterNode/(\S+)\s+Joining -> Online`).FindAllStringSubmatch(out.String(), -1)
		return len(online) == 6, fmt.Errorf("%d nodes seen going Joining -> Online, want 6", len(online))
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
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	g := sandboxGD2(ctx, t, ac, kc)
	// The walkthrough's commands are the plugin's; anthill runs the same.
	cli := cliRunner{bin: plugin}
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

	// The volumes the sandbox created, as GD2 and the heal machine see them.
	wantSets := map[string]int{"data-r3": 1, "data-2x3": 2}
	for name, sets := range wantSets {
		v, err := g.GetVolume(ctx, name)
		if err != nil {
			t.Fatalf("volume %s: %v\n%s", name, err, walk)
		}
		if v.State != gd2.VolumeStarted || len(v.Subvols) != sets {
			t.Fatalf("volume %s is %s with %d replica sets; want Started with %d", name, v.State, len(v.Subvols), sets)
		}
		if !strings.Contains(walk, name+" ") {
			t.Errorf("the walkthrough does not show volume %s:\n%s", name, walk)
		}
	}
	volumesHealthy := func(ctx context.Context) (bool, error) {
		c, err := ac.OperatorV1alpha1().GlusterClusters("gluster").Get(ctx, "gluster", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		healthy := 0
		for _, v := range c.Status.Volumes {
			if _, ok := wantSets[v.Name]; ok && v.State == "Healthy" {
				healthy++
			}
		}
		return healthy == len(wantSets), fmt.Errorf("volumes %+v", c.Status.Volumes)
	}
	waitFor("the heal machine to report both volumes Healthy", time.Minute, volumesHealthy)
	// The heal state is mirrored into each volume's GD2 metadata.
	waitFor("the heal state mirrored into GD2", 30*time.Second, func(ctx context.Context) (bool, error) {
		for name := range wantSets {
			v, err := g.GetVolume(ctx, name)
			if err != nil {
				return false, err
			}
			if v.Metadata["anthill-heal-state"] != "Healthy" {
				return false, fmt.Errorf("volume %s metadata %v", name, v.Metadata)
			}
		}
		return true, nil
	})
	if r := cli.run(ctx, kcEnv, "status", "gluster", "-n", "gluster"); r.err != nil || !strings.Contains(r.stdout, "data-r3") || !strings.Contains(r.stdout, "data-2x3") {
		t.Errorf("anthill status does not show the volumes: %s", r)
	}

	// The decommission the walkthrough prints names a node holding bricks.
	dm := regexp.MustCompile(`node decommission (\S+) -n gluster\n`).FindStringSubmatch(walk)
	if dm == nil {
		t.Fatalf("the sandbox printed no decommission of a named node:\n%s", walk)
	}
	leaving := dm[1]
	node := online[0][1]
	if node == leaving {
		node = online[1][1]
	}
	if r := cli.run(ctx, kcEnv, "node", "maintenance", node, "-n", "gluster", "--wait", "--timeout", "1m"); r.err != nil || !strings.Contains(r.stdout, "is Maintenance") {
		t.Fatalf("node maintenance --wait: %s", r)
	}
	waitFor("node "+node+" in Maintenance", time.Minute, nodeState(node, "Maintenance"))
	if r := cli.run(ctx, kcEnv, "node", "resume", node, "-n", "gluster"); r.err != nil {
		t.Fatalf("node resume: %s", r)
	}
	waitFor("node "+node+" Online again", time.Minute, nodeState(node, "Online"))

	ln, err := ac.OperatorV1alpha1().GlusterNodes("gluster").Get(ctx, leaving, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	peer := ln.Status.PeerID
	if held, err := bricksOn(ctx, g, peer); err != nil || held == 0 {
		t.Fatalf("the walkthrough decommissions %s, which holds %d brick(s) (%v)", leaving, held, err)
	}
	// The plan comes from GD2 (the sandbox's management endpoint is
	// reachable from here) through the operator's own placement policy:
	// every brick of the node has a target in the table.
	r := cli.runInput(ctx, kcEnv, "y\n", "node", "decommission", leaving, "-n", "gluster")
	if r.err != nil || !strings.Contains(r.stdout, "Plan: decommission GlusterNode gluster/"+leaving) || !strings.Contains(r.stdout, "VOLUME") || strings.Contains(r.stdout, "cannot move now") {
		t.Fatalf("node decommission: %s", r)
	}
	t.Logf("kubectl gluster node decommission %s:\n%s", leaving, r.stdout)
	// progress is the last state seen, kept when the final poll is cut
	// short by the deadline, so that a stuck drain says why.
	var progress error
	waitFor("the decommissioned node's bricks to move and heal", 4*time.Minute, func(ctx context.Context) (bool, error) {
		held, err := bricksOn(ctx, g, peer)
		if err != nil {
			return false, cmp.Or(progress, err)
		}
		if held > 0 {
			n, err := ac.OperatorV1alpha1().GlusterNodes("gluster").Get(ctx, leaving, metav1.GetOptions{})
			if err != nil {
				return false, cmp.Or(progress, err)
			}
			progress = fmt.Errorf("%s (%s: %s) still holds %d brick(s)", leaving, n.Status.State, n.Status.Message, held)
			return false, progress
		}
		for name, sets := range wantSets {
			v, err := g.GetVolume(ctx, name)
			if err != nil {
				return false, err
			}
			if n := len(v.Bricks()); n != 3*sets {
				return false, fmt.Errorf("volume %s has %d bricks", name, n)
			}
		}
		return volumesHealthy(ctx)
	})
	waitFor("the decommissioned node to leave", 2*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := ac.OperatorV1alpha1().GlusterNodes("gluster").Get(ctx, leaving, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return n.Status.State == "Deleted", fmt.Errorf("node %s is %s", leaving, n.Status.State)
	})
	waitFor("the sandbox to report the moves", 30*time.Second, func(context.Context) (bool, error) {
		return strings.Contains(errOut.String(), "brick moved: ") && strings.Contains(errOut.String(), ": "+leaving+" -> "), nil
	})
	t.Logf("moves and heals seen:\n%s", grepLines(errOut.String()+out.String(), "brick moved: ", "  heal data-"))

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
			if n[1] == leaving {
				continue
			}
			if !strings.Contains(out.String(), "GlusterNode/"+n[1]+"  Online -> Quiescing  (upgrade)") {
				return false, fmt.Errorf("no upgrade of %s in the stream yet", n[1])
			}
		}
		return true, nil
	})
	if r := (cliRunner{bin: bin}).run(ctx, kcEnv, "status", "gluster", "-n", "gluster"); r.err != nil || !strings.Contains(r.stdout, "Upgrade:  Complete") {
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

// sandboxGD2 is a GD2 client for the sandbox's pool, built as the operator
// builds it: from the cluster's management endpoint and auth secret.
func sandboxGD2(ctx context.Context, t *testing.T, ac versioned.Interface, kc kubernetes.Interface) *gd2.Client {
	t.Helper()
	c, err := ac.OperatorV1alpha1().GlusterClusters("gluster").Get(ctx, "gluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := c.Spec.Management
	if m == nil || m.Endpoint == "" || m.AuthSecretRef == nil {
		t.Fatalf("the sample cluster has no management endpoint: %+v", m)
	}
	sec, err := kc.CoreV1().Secrets("gluster").Get(ctx, m.AuthSecretRef.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := m.AuthSecretRef.Key
	if key == "" {
		key = "secret"
	}
	g, err := gd2.New(gd2.Options{Endpoint: m.Endpoint, Secret: string(sec.Data[key])})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// bricksOn counts the bricks of the sample volumes on the peer.
func bricksOn(ctx context.Context, g *gd2.Client, peer string) (int, error) {
	n := 0
	for _, name := range []string{"data-r3", "data-2x3"} {
		v, err := g.GetVolume(ctx, name)
		if err != nil {
			return 0, fmt.Errorf("volume %s: %w", name, err)
		}
		for _, b := range v.Bricks() {
			if b.PeerID == peer {
				n++
			}
		}
	}
	return n, nil
}

// grepLines returns the lines of s containing any of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
