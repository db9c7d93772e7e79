package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// operatorStandIn is a Deployment shaped as the shipped operator's
// (manifests/operator: its labels, its leader-election arguments), whose
// pods kwok runs to Ready; what the plugin checks of the operator is the
// Deployment's status and the Lease, which the test writes as a running
// or a stopped operator would leave them.
func operatorStandIn(ns string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": "anthill", "app.kubernetes.io/component": "operator"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anthill-operator", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "operator", Image: "registry.invalid/anthill:v0.3.0",
					Args: []string{"--leader-elect=true", "--leader-election-namespace=$(POD_NAMESPACE)", "--metrics-address=:8080"},
				}}},
			},
		},
	}
}

// operatorWarning starts the line every command writes first when no
// operator runs, as in this package's control plane.
const operatorWarning = "warning: the anthill operator is not running: "

// withoutOperatorWarning is stderr without that line.
func withoutOperatorWarning(stderr string) string {
	first, rest, ok := strings.Cut(stderr, "\n")
	if ok && strings.HasPrefix(first, operatorWarning) {
		return rest
	}
	return stderr
}

// TestKubectlGlusterSaysWhenTheOperatorIsStopped runs the plugin against
// the real API server with the operator's Deployment ready and its Lease
// fresh, then with the Lease stale (a hung leader), then scaled to 0:
// every command says first, on stderr, that nothing acts, while stdout
// stays what it was; init and version report no version of a stopped
// operator.
func TestKubectlGlusterSaysWhenTheOperatorIsStopped(t *testing.T) {
	ctx, cli, kc, ns, _, cluster, node := newCLIFixture(t)
	op := "--operator-namespace=" + ns
	deployments, leases := env.Client.AppsV1().Deployments(ns), env.Client.CoordinationV1().Leases(ns)
	if _, err := deployments.Create(ctx, operatorStandIn(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady := func(want int32) {
		t.Helper()
		err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
			d, err := deployments.Get(ctx, "anthill-operator", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return d.Status.ObservedGeneration == d.Generation && d.Status.ReadyReplicas == want && d.Status.Replicas == want, nil
		})
		if err != nil {
			t.Fatalf("operator Deployment with %d ready replicas: %v", want, err)
		}
	}
	renew := func(at time.Time, seconds int32) {
		t.Helper()
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anthill-operator"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("anthill-operator-7d9c-x2"), LeaseDurationSeconds: ptr.To(seconds), RenewTime: &metav1.MicroTime{Time: at}},
		}
		cur, err := leases.Get(ctx, l.Name, metav1.GetOptions{})
		if err == nil {
			cur.Spec = l.Spec
			_, err = leases.Update(ctx, cur, metav1.UpdateOptions{})
		} else {
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	const warning = operatorWarning
	// commands are every kind of command the plugin has that reads a
	// cluster, each as an admin would type it.
	commands := [][]string{
		{"status", cluster.Name},
		{"status", cluster.Name, "-o", "json"},
		{"explain", "glustercluster/" + cluster.Name, "--live=false"},
		{"explain", "glusternode/" + node.Name, "--live=false", "-o", "yaml"},
		{"transitions", cluster.Name},
		{"node", "list", cluster.Name, "-o", "jsonpath={.items[*].metadata.name}"},
		{"node", "maintenance", node.Name},
		{"toolbox", node.Name, "--print"},
	}
	runAll := func(t *testing.T, wantWarning string) {
		t.Helper()
		for _, args := range commands {
			r := cli.run(ctx, nil, append(args, "-n", ns, kc, op)...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			switch {
			case wantWarning == "" && strings.Contains(r.stderr, "warning:"):
				t.Errorf("%q warns with the operator running: %s", args, r)
			case wantWarning != "" && (!strings.HasPrefix(first, warning) || !strings.Contains(first, wantWarning) || !strings.HasSuffix(first, " — nothing below will change until it runs")):
				t.Errorf("%q: stderr's first line %q, want the warning with %q", args, first, wantWarning)
			}
			// The toolbox refuses the node, which is not Online: its error
			// follows the warning.
			if args[0] == "toolbox" {
				if r.err == nil || !strings.HasPrefix(withoutOperatorWarning(r.stderr), "error: GlusterNode "+ns+"/"+node.Name+" is not yet reported, not Online") {
					t.Errorf("toolbox of a node that is not Online: %s", r)
				}
				continue
			}
			if r.err != nil {
				t.Errorf("%q: %s", args, r)
			}
			switch last := args[len(args)-1]; {
			case last == "json" && !json.Valid([]byte(r.stdout)):
				t.Errorf("%q: stdout is not JSON alone: %s", args, r)
			case strings.HasPrefix(last, "jsonpath=") && r.stdout != node.Name:
				t.Errorf("%q: stdout is not the template's output alone (%q): %s", args, node.Name, r)
			}
		}
	}
	version := func() (string, struct {
		Operator struct {
			Running bool
			Version string
			Summary string
		}
	}) {
		t.Helper()
		r := cli.run(ctx, nil, "version", kc, op)
		if r.err != nil || r.stderr != "" {
			t.Fatalf("version: %s", r)
		}
		var v struct {
			Operator struct {
				Running bool
				Version string
				Summary string
			}
		}
		j := cli.run(ctx, nil, "version", kc, op, "-o", "json")
		if err := json.Unmarshal([]byte(j.stdout), &v); err != nil {
			t.Fatalf("version -o json: %v: %s", err, j)
		}
		return r.stdout, v
	}

	t.Run("a ready replica and a fresh Lease: no warning, version shows the operator's", func(t *testing.T) {
		waitReady(1)
		renew(time.Now(), 3600)
		runAll(t, "")
		out, v := version()
		want := "anthill operator: v0.3.0 (image registry.invalid/anthill:v0.3.0; Deployment " + ns + "/anthill-operator, 1 of 1 replicas ready; leader anthill-operator-7d9c-x2)\n"
		if !strings.HasSuffix(out, want) || !v.Operator.Running || v.Operator.Version != "v0.3.0" {
			t.Errorf("version:\n%s\n%+v\nwant the line %q, running v0.3.0", out, v, want)
		}
	})

	t.Run("a ready replica but a Lease last renewed 5m ago: a hung leader", func(t *testing.T) {
		renew(time.Now().Add(-5*time.Minute), 15)
		runAll(t, "Lease "+ns+"/anthill-operator last renewed 5m")
	})

	t.Run("scaled to 0: every command warns, init and version report no version", func(t *testing.T) {
		if _, err := deployments.Patch(ctx, "anthill-operator", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitReady(0)
		runAll(t, "Deployment "+ns+"/anthill-operator is scaled to 0; Lease "+ns+"/anthill-operator last renewed 5m")
		out, v := version()
		if !strings.Contains(out, "anthill operator: not running: Deployment "+ns+"/anthill-operator is scaled to 0") || v.Operator.Running || v.Operator.Version != "" {
			t.Errorf("version of a stopped operator:\n%s\n%+v", out, v)
		}
		// init describes what it sees, then asks: with no answer it stops
		// there.
		r := cli.run(ctx, nil, "init", "-n", ns, kc, op)
		if !strings.HasPrefix(r.stderr, warning) || !strings.Contains(r.stdout, "anthill operator: not running; the cluster is created but nothing acts on it until the operator runs") || strings.Contains(r.stdout, "v0.3.0") {
			t.Errorf("init with the operator stopped: %s", r)
		}
	})
}

// TestKubectlGlusterToolbox runs the toolbox against the real API server:
// refused for a node that is not Online; for an Online node, --print prints
// the kubectl exec command with the cluster's credentials, without kubectl
// on the PATH it prints it and fails, and with one it runs exactly that
// (a stand-in kubectl records its arguments and exit code: kwok's nodes
// run no container to exec into).
func TestKubectlGlusterToolbox(t *testing.T) {
	ctx, cli, kc, ns, ac, cluster, node := newCLIFixture(t)
	setState := func(state string) {
		t.Helper()
		n, err := ac.GlusterNodes(ns).Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.State = state
		if _, err := ac.GlusterNodes(ns).UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	exitCode := func(err error) int {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			return -1
		}
		return 0
	}

	setState("Maintenance")
	r := cli.run(ctx, nil, "toolbox", node.Name, "-n", ns, kc, "--print")
	if exitCode(r.err) != 1 || !strings.Contains(r.stderr, "error: GlusterNode "+ns+"/"+node.Name+" is Maintenance, not Online") || r.stdout != "" {
		t.Errorf("toolbox of a node in Maintenance should be refused, printing nothing: %s", r)
	}

	setState("Online")
	pod := node.Name + "-0"
	// GD2 binds only its client address, the pod's DNS name.
	glustercli := "glustercli --endpoints http://" + pod + ".gluster-nodes." + ns + ".svc:24007 --user glustercli --secret-file /var/lib/glusterd2/auth"
	r = cli.run(ctx, nil, "toolbox", node.Name, "-n", ns, kc, "--print", "--", "peer", "list")
	want := "kubectl " + kc + " exec -i -t -n " + ns + " " + pod + " -c glusterd2 -- " + glustercli + " peer list\n"
	if r.err != nil || r.stdout != want {
		t.Errorf("toolbox --print:\n%s\nwant stdout\n%s", r, want)
	}

	// A cluster with TLS (fixed at creation) makes glustercli trust the
	// node's CA bundle and reach GD2 by the name its certificate holds.
	var tlsCluster operatorv1alpha1.GlusterCluster
	loadSample(t, "glustercluster.yaml", &tlsCluster)
	tlsCluster.Name = cluster.Name + "-tls"
	tlsCluster.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca"}
	if _, err := ac.GlusterClusters(ns).Create(ctx, &tlsCluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var tlsNode operatorv1alpha1.GlusterNode
	loadSample(t, "glusternode.yaml", &tlsNode)
	tlsNode.Name, tlsNode.Spec.Cluster = node.Name+"-tls", tlsCluster.Name
	created, err := ac.GlusterNodes(ns).Create(ctx, &tlsNode, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.State = "Online"
	if _, err := ac.GlusterNodes(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = cli.run(ctx, nil, "toolbox", tlsNode.Name, "-n", ns, kc, "--print")
	tlsPod := tlsNode.Name + "-0"
	tls := "glustercli --endpoints https://" + tlsPod + "." + tlsCluster.Name + "-nodes." + ns + ".svc:24007 --user glustercli --secret-file /var/lib/glusterd2/auth --cacert /etc/glusterd2/tls/ca.crt\n"
	if r.err != nil || r.stdout != "kubectl "+kc+" exec -i -t -n "+ns+" "+tlsPod+" -c glusterd2 -- "+tls {
		t.Errorf("toolbox --print with TLS:\n%s\nwant the command to end\n%s", r, tls)
	}

	// No kubectl on the PATH: the command is printed, and the toolbox fails.
	empty := t.TempDir()
	r = cli.run(ctx, []string{"PATH=" + empty}, "toolbox", node.Name, "-n", ns, kc)
	if exitCode(r.err) != 1 || !strings.Contains(r.stdout, " exec -i -t -n "+ns+" "+pod+" -c glusterd2 -- glustercli ") || !strings.Contains(r.stderr, "the command above opens the toolbox") {
		t.Errorf("toolbox without kubectl: %s", r)
	}

	// A stand-in kubectl: what the toolbox runs, and its exit code passed on.
	bin := t.TempDir()
	record := filepath.Join(bin, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + record + "\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r = cli.run(ctx, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, "toolbox", tlsNode.Name, "-n", ns, kc, "--", "volume", "status")
	if exitCode(r.err) != 3 {
		t.Errorf("the toolbox's exit code is not kubectl's (3): %s", r)
	}
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("kubectl was not run: %v; %s", err, r)
	}
	// Not a terminal: stdin passed on, no -t.
	wantArgs := strings.Join([]string{kc, "exec", "-i", "-n", ns, tlsPod, "-c", "glusterd2", "--"}, "\n") + "\n" +
		strings.ReplaceAll(strings.TrimSuffix(tls, "\n"), " ", "\n") + "\nvolume\nstatus\n"
	if string(got) != wantArgs {
		t.Errorf("kubectl ran with\n%s\nwant\n%s", got, wantArgs)
	}
}
