//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// TestOperatorsOnTheirOwnNamespaces: two operators on one control plane,
// each started with --watch-namespace on a namespace of its own, the
// second under the namespaced install's RBAC alone (manifests/namespaced:
// a Role in its namespace, a ClusterRole for what has no namespace). Each
// brings its own cluster to Ready and carries out a maintenance request
// there, and neither makes a transition in the other's namespace or is
// denied a request.
func TestOperatorsOnTheirOwnNamespaces(t *testing.T) {
	sideBySide(t)
	ctx := context.Background()
	nsA := newNamespace(t) // the test's operator watches this one only
	nsB := env.Namespace(t)
	const sa = "anthill-namespaced-e2e"
	kubeconfig, err := env.InstallNamespacedOperatorRBAC(ctx, sa, []string{nsB})
	if err != nil {
		t.Fatal(err)
	}
	opB, err := env.StartOperatorWith(kubeconfig, binPath, operatorIdentity(t.Name())+"-b",
		append([]string{"--leader-election-namespace=" + nsB, "--watch-namespace=" + nsB}, testTimers...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(opB.Stop)

	createCluster(t, nsA, "alpha", 1)
	createCluster(t, nsB, "beta", 1)
	nodesA := waitNodes(t, nsA, "alpha", 3, 3*time.Minute)
	nodesB := waitNodes(t, nsB, "beta", 3, 3*time.Minute)
	for ns, nodes := range map[string]map[string]operatorv1alpha1.GlusterNode{nsA: nodesA, nsB: nodesB} {
		for n := range nodes {
			requestOnNode(t, ns, n, "maintenance")
			waitNodeState(t, ns, n, "Maintenance", time.Minute)
			break
		}
	}

	logsA, logsB := operatorOf(t).Logs(), opB.Logs()
	for _, c := range []struct {
		who, logs, own, other string
	}{{"the operator of " + nsA, logsA, nsA, nsB}, {"the namespaced operator of " + nsB, logsB, nsB, nsA}} {
		if len(transitionsIn(c.logs, c.own)) == 0 {
			t.Errorf("%s made no transition in its own namespace", c.who)
		}
		if l := transitionsIn(c.logs, c.other); len(l) > 0 {
			t.Errorf("%s made %d transition(s) in %s, which it does not watch, e.g. %+v", c.who, len(l), c.other, l[0])
		}
	}
	denied := `is forbidden: User \"system:serviceaccount:` + framework.OperatorNamespace + ":" + sa + `\"`
	for _, l := range strings.Split(logsB, "\n") {
		if strings.Contains(l, denied) {
			t.Fatalf("the namespaced install's RBAC denied the operator a request:\n%s", l)
		}
	}
}
