//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
)

// TestInitAndDeleteThroughThePlugin creates a cluster with `kubectl
// gluster init --non-interactive` (pointed at the test's GD2 simulator
// through the management questions), lets the running operator bring it
// up, and deletes it with `kubectl gluster delete --yes --wait`, which
// returns once the operator's finalizer has torn it down.
func TestInitAndDeleteThroughThePlugin(t *testing.T) {
	aloneWithCSI(t, "the CSI driver's name is fixed, so one cluster at a time runs it (docs/csi.md)")
	ns := newNamespace(t)
	const name = "guided"
	ctx := context.Background()
	startSim(t, ns, defaultSimOptions)
	if err := env.CreateSimAuthSecret(ctx, ns, name, simOf(t)); err != nil {
		t.Fatal(err)
	}
	bin := framework.KubectlGlusterBinary.For(t)
	plugin := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", env.Kubeconfig, "-n", ns)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}

	out, errOut, err := plugin("init", "--non-interactive", "--yes", "--name", name, "--zones", "zone-1,zone-2,zone-3",
		"--management-endpoint", simOf(t).URL, "--management-secret", framework.SimSecretName(name))
	if err != nil || !strings.Contains(out, "GlusterCluster "+ns+"/"+name+" created") {
		t.Fatalf("init: %v\n%s%s", err, out, errOut)
	}
	waitNodes(t, ns, name, 3, 2*time.Minute)

	out, errOut, err = plugin("delete", name, "--yes", "--wait", "--timeout", "3m")
	t.Logf("kubectl gluster delete %s --yes --wait:\n%s%s", name, out, errOut)
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("delete --wait: %v", err)
	}
	for _, want := range []string{
		"  2. deletes the GlusterNodes one at a time, each drained and detached first: 3: ",
		"First step: Deleting 3 GlusterNode(s).",
		"waiting: phase Deleting",
		"GlusterCluster " + ns + "/" + name + " is gone",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("delete's output lacks %q", want)
		}
	}
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the cluster is still there after delete --wait: %v", err)
	}
	noViolations(t)
}
