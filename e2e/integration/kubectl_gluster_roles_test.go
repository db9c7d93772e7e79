package integration

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
)

// unreadOutsideTheRoles are the lines in which a command says what it
// could not read, for the reads docs/rbac.md says no person role grants:
// the cluster-scoped nodes and StorageClasses of init's defaults, the
// PersistentVolumes of delete's plan.
var unreadOutsideTheRoles = []string{
	"note: cannot list nodes (no zone default): ",
	"note: cannot list StorageClasses: ",
	"unknown here (cannot list PersistentVolumes: ",
}

// deniedIn returns the first line of out saying a request was refused, or
// that the operator could not be checked, leaving out the lines of
// unreadOutsideTheRoles.
func deniedIn(out string) string {
	for _, line := range strings.Split(out, "\n") {
		documented := false
		for _, u := range unreadOutsideTheRoles {
			documented = documented || strings.Contains(line, u)
		}
		if documented {
			continue
		}
		if l := strings.ToLower(line); strings.Contains(l, "forbidden") || strings.Contains(l, "cannot check whether the anthill operator runs") {
			return line
		}
	}
	return ""
}

// TestKubectlGlusterRunsUnderEachPersonRole runs the plugin's commands
// against the real API server as users bound to nothing but the roles
// docs/rbac.md gives them (impersonated with --as, as kubectl's own flag):
// each person role in the cluster's namespace and gluster-operator-health
// in the operator's. Every command a role is meant for (docs/rbac.md,
// "People") must succeed with no request refused and with the operator
// checked; so a role that lacks a verb one of its commands uses fails
// here. The toolbox's own part, kubectl exec, is the two requests kubectl
// makes, sent as a user holding gluster-toolbox. Users missing a role show
// that the check notices a refusal.
func TestKubectlGlusterRunsUnderEachPersonRole(t *testing.T) {
	ctx, cli, kc, ns, ac, cluster, node := newCLIFixture(t)
	opNs := env.Namespace(t)
	root := framework.RepoRoot()
	applyPersonRoles(ctx, t, filepath.Join(root, "manifests", "rbac", "person_roles.yaml"), opNs)

	// The operator as the plugin finds it: its Deployment and a Lease
	// renewed now.
	if _, err := env.Client.AppsV1().Deployments(opNs).Create(ctx, operatorStandIn(opNs), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: opNs, Name: "anthill-operator"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("anthill-operator-7d9c-x2"), LeaseDurationSeconds: ptr.To[int32](3600),
			RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	if _, err := env.Client.CoordinationV1().Leases(opNs).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The toolbox opens only an Online node.
	n, err := ac.GlusterNodes(ns).Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.State = "Online"
	if _, err := ac.GlusterNodes(ns).UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// user is a user of this test's own (the namespace in its name) bound
	// to the person role in ns and, when withOperatorHealth, to
	// gluster-operator-health in the operator's namespace.
	user := func(role string, withOperatorHealth bool) string {
		name := role
		if !withOperatorHealth {
			name += "-alone"
		}
		u := ns + ":" + name
		bindUser(ctx, t, ns, name, "ClusterRole", role, u)
		if withOperatorHealth {
			bindUser(ctx, t, opNs, name, "Role", "gluster-operator-health", u)
		}
		return u
	}
	as := func(u string, args ...string) cliResult {
		conn := []string{"-n", ns, kc, "--operator-namespace=" + opNs, "--as=" + u}
		if args[0] == "__complete" {
			// The word being completed comes last.
			last := len(args) - 1
			return cli.run(ctx, nil, append(append(append([]string(nil), args[:last]...), conn...), args[last])...)
		}
		return cli.run(ctx, nil, append(args, conn...)...)
	}

	// The commands of each role, as docs/rbac.md lists them; each role
	// runs its own and those of the roles below it. Their order matters
	// where one changes what the next reads (maintenance, then resume; a
	// cluster created, then deleted).
	viewCommands := [][]string{
		{"status", cluster.Name},
		{"status", cluster.Name, "-o", "json"},
		{"explain", "glustercluster/" + cluster.Name, "--live=false"},
		{"explain", "glusternode/" + node.Name, "--live=false"},
		{"node", "list", cluster.Name},
		{"transitions", cluster.Name},
		{"transitions"},
		{"version"},
		{"__complete", "status", ""},
	}
	// Each role that may creates a cluster of its own, and deletes it.
	editCommands := func(name string) [][]string {
		return [][]string{
			{"init", "--non-interactive", "--yes", "--name", name, "--zones", "zone-1,zone-2,zone-3"},
			{"delete", name, "--yes"},
		}
	}
	adminCommands := [][]string{
		{"node", "maintenance", node.Name},
		{"node", "resume", node.Name},
		{"toolbox", node.Name, "--print"},
	}
	for _, tc := range []struct {
		role     string
		commands [][]string
	}{
		{"gluster-view", viewCommands},
		{"gluster-edit", slices.Concat(viewCommands, editCommands("made-by-edit"))},
		{"gluster-admin", slices.Concat(viewCommands, editCommands("made-by-admin"), adminCommands)},
	} {
		t.Run(tc.role, func(t *testing.T) {
			u := user(tc.role, true)
			for _, args := range tc.commands {
				r := as(u, args...)
				if r.err != nil {
					t.Errorf("%q as %s: %s", args, tc.role, r)
					continue
				}
				if line := deniedIn(r.stdout + "\n" + r.stderr); line != "" {
					t.Errorf("%q as %s was refused a request: %q\n%s", args, tc.role, line, r)
				}
				switch args[0] {
				case "version":
					if !strings.Contains(r.stdout, "anthill operator: v0.3.0 (image registry.invalid/anthill:v0.3.0; Deployment "+opNs+"/anthill-operator") {
						t.Errorf("version as %s does not report the operator: %s", tc.role, r)
					}
				case "__complete":
					if !strings.Contains(r.stdout, cluster.Name+"\n") {
						t.Errorf("completion as %s does not offer the cluster %s: %s", tc.role, cluster.Name, r)
					}
				}
			}
		})
	}

	t.Run("a command beyond the role, or no gluster-operator-health, is noticed", func(t *testing.T) {
		viewer := user("gluster-view", true)
		r := as(viewer, "node", "maintenance", node.Name)
		if r.err == nil || deniedIn(r.stderr) == "" {
			t.Errorf("node maintenance as gluster-view was not refused: %s", r)
		}
		alone := user("gluster-admin", false)
		r = as(alone, "status", cluster.Name)
		if r.err != nil || !strings.Contains(deniedIn(r.stderr), "note: cannot check whether the anthill operator runs") {
			t.Errorf("status without gluster-operator-health should note that it cannot check the operator: %s", r)
		}
	})

	// kubectl exec, which the toolbox runs, reads the pod and then creates
	// pods/exec on it. The pod stays unscheduled (no node has its label),
	// so the API server, once it has authorized the exec, answers that it
	// has no host to send it to: any answer but Forbidden is the rights
	// being enough.
	t.Run("gluster-toolbox: kubectl exec's requests", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: node.Name + "-0"},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"anthill.test/no-such-node": "true"},
				Containers:   []corev1.Container{{Name: "glusterd2", Image: "registry.invalid/gluster/glusterd2:4.1.0"}},
			},
		}
		if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		execAs := func(u string) (getErr, execErr error) {
			cfg := rest.CopyConfig(env.RestConfig)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: u}
			c, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, getErr = c.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			execErr = c.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod.Name).SubResource("exec").
				Param("container", "glusterd2").Param("command", "glustercli").Param("stdin", "true").Param("stdout", "true").
				Do(ctx).Error()
			return getErr, execErr
		}
		toolbox := user("gluster-toolbox", true)
		getErr, execErr := execAs(toolbox)
		if getErr != nil {
			t.Errorf("get the node's pod as gluster-toolbox: %v", getErr)
		}
		t.Logf("exec as gluster-toolbox: %v", execErr)
		if execErr == nil || apierrors.IsForbidden(execErr) {
			t.Errorf("exec into the node's pod as gluster-toolbox: %v; want it authorized (and refused for want of a host)", execErr)
		}
		getErr, execErr = execAs(user("gluster-admin", true))
		if !apierrors.IsForbidden(getErr) || !apierrors.IsForbidden(execErr) {
			t.Errorf("gluster-admin alone may read the pod (%v) or exec (%v); the toolbox's rights are gluster-toolbox's", getErr, execErr)
		}
	})
}

// bindUser binds user to the role of kind (Role, ClusterRole) in
// namespace ns, by a RoleBinding named binding.
func bindUser(ctx context.Context, t *testing.T, ns, binding, kind, role, user string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: binding, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := env.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
