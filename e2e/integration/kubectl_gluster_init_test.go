//go:build e2e

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// terminal is the plugin running on a pseudo-terminal, driven as a person
// would: wait for a prompt, type an answer.
type terminal struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd
	out  lockedBuffer
	// seen is how much of out the prompts waited for so far.
	seen int
	done chan error
}

func startTerminal(ctx context.Context, t *testing.T, bin string, args ...string) *terminal {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("start %s on a pseudo-terminal: %v", bin, err)
	}
	term := &terminal{t: t, ptmx: ptmx, cmd: cmd, done: make(chan error, 1)}
	copied := make(chan struct{})
	go func() {
		// Reading ends with EIO once the process has exited and the
		// terminal's other side is closed.
		_, _ = io.Copy(&term.out, ptmx)
		close(copied)
	}()
	go func() {
		err := cmd.Wait()
		<-copied
		term.done <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = ptmx.Close()
	})
	return term
}

// expect waits until text appears after what earlier prompts consumed.
func (term *terminal) expect(text string) {
	term.t.Helper()
	err := framework.WaitFor(context.Background(), time.Minute, func(context.Context) (bool, error) {
		return strings.Contains(term.out.String()[term.seen:], text), nil
	})
	if err != nil {
		term.t.Fatalf("waiting for %q: %v\nterminal so far:\n%s", text, err, term.out.String())
	}
	all := term.out.String()
	term.seen += strings.Index(all[term.seen:], text) + len(text)
}

// answer waits for prompt and types line.
func (term *terminal) answer(prompt, line string) {
	term.t.Helper()
	term.expect(prompt)
	if _, err := term.ptmx.Write([]byte(line + "\r")); err != nil {
		term.t.Fatalf("type %q: %v", line, err)
	}
}

// wait waits for the process to exit and returns its error.
func (term *terminal) wait() error {
	term.t.Helper()
	select {
	case err := <-term.done:
		return err
	case <-time.After(time.Minute):
		term.t.Fatalf("the process did not exit; terminal:\n%s", term.out.String())
		return nil
	}
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestKubectlGlusterInitAndDelete runs init on a pseudo-terminal and with
// flags, and delete, as the real plugin binary against the real API server
// and the real GlusterCluster CRD: every verdict on an answer is
// admission's own.
func TestKubectlGlusterInitAndDelete(t *testing.T) {
	ctx, cli, kc, ns, ac, _, _ := newCLIFixture(t)

	t.Run("the wizard asks again with admission's message and creates what was answered", func(t *testing.T) {
		term := startTerminal(ctx, t, cli.bin, "init", "-n", ns, kc)
		term.expect("Kubernetes nodes:")
		term.answer("Namespace ["+ns+"]: ", "")
		term.answer("Cluster name [gluster]: ", "wizard")
		term.answer("Mode (manual, automatic, external) [manual]: ", "")
		term.answer("Zones, comma-separated (one node template each)", "zone-1,zone-2,zone-3")
		term.answer("Gluster servers per zone [1]: ", "")
		term.answer("StorageClass of the brick claims", "-")
		// Wrong: the CRD's rule on capacity rejects it, and the same
		// question comes again.
		term.answer("Capacity of each brick claim [100Gi]: ", "0")
		term.expect("rejected: spec.nodeTemplates[0].storage.capacity: ")
		term.expect("storage.capacity must be a positive quantity such as 500Gi")
		term.answer("Capacity of each brick claim [100Gi]: ", "10Gi")
		term.answer("Brick claims per server [1]: ", "")
		// The sample names no image: the pinned GD2 image.
		term.answer("Gluster server image, empty for the pinned GD2 image: ", "")
		// Wrong too, by the version's rule; then the default.
		term.answer("Gluster version [4.1.0]: ", "four")
		term.expect("gluster.version must be a semantic version such as 4.1.0 or v4.1")
		term.answer("Gluster version [4.1.0]: ", "")
		// Block is refused by the API, with the reason; then the default.
		term.answer("CSI drivers (file) [file]: ", "file,block")
		term.expect("spec.drivers: block is not available")
		term.answer("CSI drivers (file) [file]: ", "")
		term.answer("TLS: Secret holding the CA (tls.crt, tls.key), empty for none: ", "")
		term.answer("GD2 REST endpoint for an operator outside the cluster network, empty for the cluster's Service: ", "")
		term.answer("Secret holding GD2's shared secret (key secret), empty for the one the operator creates: ", "")
		term.answer("downtime before a server is declared failed [30m]: ", "")
		term.answer("grace before an unreachable server is Offline: ", "")
		term.answer("servers upgraded together [1]: ", "")
		term.answer("one zone at a time (true/false) [true]: ", "")
		term.answer("heal timeout per server [1h]: ", "")
		term.expect("GlusterCluster to create:")
		term.answer("Create GlusterCluster "+ns+"/wizard? [y/N]: ", "y")
		term.expect("GlusterCluster " + ns + "/wizard created")
		if err := term.wait(); err != nil {
			t.Fatalf("init exited with %v; terminal:\n%s", err, term.out.String())
		}
		t.Logf("kubectl gluster init on a terminal:\n%s", term.out.String())
		c, err := ac.GlusterClusters(ns).Get(ctx, "wizard", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the wizard's cluster: %v", err)
		}
		if len(c.Spec.NodeTemplates) != 3 {
			t.Fatalf("%d node templates, want one per zone: %+v", len(c.Spec.NodeTemplates), c.Spec.NodeTemplates)
		}
		for i, tmpl := range c.Spec.NodeTemplates {
			zone := fmt.Sprintf("zone-%d", i+1)
			if tmpl.Zone != zone || tmpl.Name != zone || tmpl.Nodes == nil || *tmpl.Nodes != 1 ||
				tmpl.Storage.Capacity.Cmp(resource.MustParse("10Gi")) != 0 || tmpl.Storage.StorageClassName != nil {
				t.Errorf("template %d = %+v, want zone %s, 1 node, 10Gi from the default StorageClass", i, tmpl, zone)
			}
		}
		if c.Spec.Mode != operatorv1alpha1.ClusterModeManual || c.Spec.Gluster == nil || c.Spec.Gluster.Version != "4.1.0" || c.Spec.Gluster.Image != "" ||
			len(c.Spec.Drivers) != 1 || c.Spec.Drivers[0] != operatorv1alpha1.GlusterDriverFile || c.Spec.CASecretRef != nil || c.Spec.UpgradePolicy == nil || !c.Spec.UpgradePolicy.PerZone {
			t.Errorf("spec = %+v, want what was answered", c.Spec)
		}
	})

	t.Run("Ctrl-C at a prompt ends the wizard and creates nothing", func(t *testing.T) {
		term := startTerminal(ctx, t, cli.bin, "init", "-n", ns, kc)
		term.answer("Namespace ["+ns+"]: ", "")
		term.expect("Cluster name [gluster]: ")
		if _, err := term.ptmx.Write([]byte{0x03}); err != nil { // the terminal's intr character
			t.Fatal(err)
		}
		err := term.wait()
		if exitCode(err) != 1 || !strings.Contains(term.out.String(), "error: interrupted: context canceled") {
			t.Errorf("Ctrl-C should end init with exit 1 (%v); terminal:\n%s", err, term.out.String())
		}
		if l, err := ac.GlusterClusters(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 2 {
			t.Errorf("after Ctrl-C the namespace should hold the fixture's and the wizard's clusters only (%v)", err)
		}
	})

	t.Run("an answer typed ahead of its prompt is not lost", func(t *testing.T) {
		r := cli.runInput(ctx, nil, "\npiped\n\nzone-1\n"+strings.Repeat("\n", 16), "init", "-n", ns, kc, "--print")
		if r.err != nil {
			t.Fatalf("init --print with piped answers: %s", r)
		}
		if !strings.Contains(r.stdout, "name: piped") || !strings.Contains(r.stdout, "zone: zone-1") {
			t.Errorf("the printed cluster lacks the piped answers: %s", r)
		}
		if _, err := ac.GlusterClusters(ns).Get(ctx, "piped", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("--print created the cluster (get: %v)", err)
		}
	})

	t.Run("--non-interactive fails in one line with admission's message", func(t *testing.T) {
		r := cli.run(ctx, nil, "init", "--non-interactive", "--yes", "-n", ns, kc, "--name", "flags", "--nodes-per-zone", "200")
		// No operator runs here: the warning that says so comes first.
		if exitCode(r.err) != 1 || strings.Count(withoutOperatorWarning(r.stderr), "\n") != 1 ||
			!strings.Contains(r.stderr, "--nodes-per-zone=200: spec.nodeTemplates[0].nodes: Invalid value: 200: spec.nodeTemplates[0].nodes in body should be less than or equal to 128") {
			t.Errorf("want exit 1 and admission's message for --nodes-per-zone in one line: %s", r)
		}
		r = cli.run(ctx, nil, "init", "--non-interactive", "--yes", "-n", ns, kc, "--name", "flags", "--mode", "automatic", "--min-nodes-per-zone", "3", "--max-nodes-per-zone", "2")
		if exitCode(r.err) != 1 || !strings.Contains(r.stderr, "nodeTemplates[].minNodes must not be greater than maxNodes") {
			t.Errorf("want exit 1 and the CRD rule's message: %s", r)
		}
		r = cli.run(ctx, nil, "init", "--non-interactive", "-n", ns, kc, "--name", "flags")
		if exitCode(r.err) != 2 || !strings.Contains(r.stderr, "--non-interactive needs --yes") {
			t.Errorf("--non-interactive without --yes or --print is a usage error (exit 2): %s", r)
		}
		if _, err := ac.GlusterClusters(ns).Get(ctx, "flags", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a rejected init created the cluster (get: %v)", err)
		}
		r = cli.run(ctx, nil, "init", "--non-interactive", "-n", ns, kc, "--name", "flags", "--zones", "zone-1,zone-2", "-o", "json")
		var printed operatorv1alpha1.GlusterCluster
		if r.err != nil || json.Unmarshal([]byte(r.stdout), &printed) != nil || printed.Name != "flags" || len(printed.Spec.NodeTemplates) != 2 {
			t.Errorf("init --non-interactive -o json should print the checked cluster: %s", r)
		}
		r = cli.run(ctx, nil, "init", "--non-interactive", "--yes", "-n", ns, kc, "--name", "flags", "--zones", "zone-1")
		if r.err != nil || !strings.Contains(r.stdout, "GlusterCluster "+ns+"/flags created") {
			t.Errorf("init --non-interactive --yes: %s", r)
		}
		if _, err := ac.GlusterClusters(ns).Get(ctx, "flags", metav1.GetOptions{}); err != nil {
			t.Errorf("init --non-interactive --yes did not create the cluster: %v", err)
		}
	})

	t.Run("delete shows what holds it, does nothing on no, and --wait returns once it is gone", func(t *testing.T) {
		before, err := ac.GlusterClusters(ns).Get(ctx, "wizard", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pvName := ns + "-wizard-vol"
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: pvName},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					CSI: &corev1.CSIPersistentVolumeSource{Driver: objects.CSIDriverName(operatorv1alpha1.GlusterDriverFile), VolumeHandle: pvName},
				},
			},
		}
		if _, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
		})
		for _, answer := range []string{"n\n", ""} {
			r := cli.runInput(ctx, nil, answer, "delete", "wizard", "-n", ns, kc)
			if exitCode(r.err) != 1 || !strings.Contains(r.stderr, "error: not confirmed; nothing changed") ||
				!strings.Contains(r.stderr, "Delete GlusterCluster "+ns+"/wizard? [y/N]: ") {
				t.Errorf("answer %q: want the question and exit 1: %s", answer, r)
			}
			for _, want := range []string{
				"Plan: delete GlusterCluster " + ns + "/wizard (mode manual",
				"exist: 1: " + pvName,
				"Blocked now: 1 PersistentVolume(s) still use the cluster; delete them first: " + pvName + ". (PersistentVolumesExist)",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("answer %q: the plan lacks %q: %s", answer, want, r)
				}
			}
		}
		after, err := ac.GlusterClusters(ns).Get(ctx, "wizard", metav1.GetOptions{})
		if err != nil || after.ResourceVersion != before.ResourceVersion || after.DeletionTimestamp != nil {
			t.Fatalf("delete answered no changed the cluster (%v): %+v", err, after.ObjectMeta)
		}

		// No operator runs here: a finalizer of the test's own holds the
		// cluster as the operator's would, so --wait has something to wait
		// for.
		const hold = "test.gluster.org/hold"
		patch := []byte(`{"metadata":{"finalizers":["` + hold + `"]}}`)
		if _, err := ac.GlusterClusters(ns).Patch(ctx, "wizard", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		r := cli.run(ctx, nil, "delete", "wizard", "-n", ns, kc, "--yes", "--wait", "--timeout", "3s")
		if exitCode(r.err) != 124 || !strings.Contains(r.stderr, "timed out after 3s waiting for GlusterCluster "+ns+"/wizard to be deleted") ||
			!strings.Contains(r.stdout, "deletion requested") || !strings.Contains(r.stdout, "waiting: phase -") {
			t.Errorf("delete --wait held by a finalizer should run out with exit 124: %s", r)
		}
		var out, errOut lockedBuffer
		waiter := exec.CommandContext(ctx, cli.bin, "delete", "wizard", "-n", ns, kc, "--wait", "--timeout", "1m")
		waiter.Stdout, waiter.Stderr = &out, &errOut
		if err := waiter.Start(); err != nil {
			t.Fatal(err)
		}
		if err := framework.WaitFor(ctx, time.Minute, func(context.Context) (bool, error) {
			return strings.Contains(out.String(), "waiting: "), nil
		}); err != nil {
			t.Fatalf("delete --wait of a cluster being deleted: %v\n%s%s", err, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), "It is already being deleted") {
			t.Errorf("the plan should say the deletion runs: %s", out.String())
		}
		if _, err := ac.GlusterClusters(ns).Patch(ctx, "wizard", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := waiter.Wait(); err != nil || !strings.Contains(out.String(), "GlusterCluster "+ns+"/wizard is gone") {
			t.Errorf("delete --wait should return once the cluster is gone (%v):\n%s%s", err, out.String(), errOut.String())
		}
		if _, err := ac.GlusterClusters(ns).Get(ctx, "wizard", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the cluster is still there: %v", err)
		}
		// The PV names the CSI driver's fixed name, which every cluster's
		// PVs share, so it holds the other cluster's deletion too
		// (docs/csi.md): it goes first.
		r = cli.run(ctx, nil, "delete", "flags", "-n", ns, kc)
		if !strings.Contains(r.stdout, "Blocked now: 1 PersistentVolume(s) still use the cluster; delete them first: "+pvName) {
			t.Errorf("the plan for flags should name the shared driver's PV as what holds it: %s", r)
		}
		if err := env.Client.CoreV1().PersistentVolumes().Delete(ctx, pvName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			_, err := env.Client.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, fmt.Errorf("PV %s still there (%v)", pvName, err)
		}); err != nil {
			t.Fatal(err)
		}
		r = cli.run(ctx, nil, "delete", "flags", "-n", ns, kc, "--yes", "--wait", "--timeout", "1m")
		if r.err != nil || !strings.Contains(r.stdout, "First step: ") || !strings.Contains(r.stdout, "GlusterCluster "+ns+"/flags is gone") {
			t.Errorf("delete --yes --wait: %s", r)
		}
	})
}
