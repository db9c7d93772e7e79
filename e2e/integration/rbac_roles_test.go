package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
)

// personRoles are the columns of docs/rbac.md's people table, in order,
// with the built-in role each aggregates into.
var personRoles = []struct{ name, builtin string }{
	{"gluster-view", "view"}, {"gluster-edit", "edit"}, {"gluster-admin", "admin"},
}

// matrixVerbs are the verbs every cell of the matrix is asked about.
var matrixVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// resourceGroup is the API group of each resource the people table names.
var resourceGroup = map[string]string{
	"glusterclusters": "operator.gluster.org", "glusternodes": "operator.gluster.org",
	"events": "", "pods": "", "secrets": "", "persistentvolumeclaims": "", "statefulsets": "apps",
}

// TestPersonRolesCanDoExactlyWhatTheDocSays binds each person role of
// manifests/rbac/person_roles.yaml to a user in one namespace and asks the
// API server (SubjectAccessReview) about every verb on every resource of
// docs/rbac.md's people table: allowed exactly where the table says so in
// that namespace, and nothing in another namespace. A second user holding
// only the built-in role the person role aggregates into gets the same
// Gluster permissions, through the real aggregation controller.
func TestPersonRolesCanDoExactlyWhatTheDocSays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := framework.RepoRoot()
	want := peopleTable(t, filepath.Join(root, "docs", "rbac.md"))
	applyClusterRoles(ctx, t, filepath.Join(root, "manifests", "rbac", "person_roles.yaml"))

	const ns, other = "rbac-matrix", "rbac-matrix-other"
	for _, n := range []string{ns, other} {
		if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, r := range personRoles {
		bind(ctx, t, ns, "person-"+r.name, r.name)
		bind(ctx, t, ns, "builtin-"+r.builtin, r.builtin)
	}

	for _, r := range personRoles {
		t.Run(r.name, func(t *testing.T) {
			for res, allowed := range want[r.name] {
				for _, verb := range matrixVerbs {
					wantAllowed := slices.Contains(allowed, verb)
					if got := can(ctx, t, "person-"+r.name, verb, res, ns); got != wantAllowed {
						t.Errorf("%s in its namespace: %s %s allowed=%v, docs/rbac.md says %v", r.name, verb, res, got, wantAllowed)
					}
					if can(ctx, t, "person-"+r.name, verb, res, other) {
						t.Errorf("%s bound in %s may %s %s in %s", r.name, ns, verb, res, other)
					}
				}
			}
		})
	}

	// Aggregation is done by kube-controller-manager, asynchronously: wait
	// until the built-in roles include the person roles' rules.
	for _, r := range personRoles {
		t.Run("aggregated into "+r.builtin, func(t *testing.T) {
			for _, res := range []string{"glusterclusters", "glusternodes"} {
				for _, verb := range want[r.name][res] {
					deadline := time.Now().Add(30 * time.Second)
					for !can(ctx, t, "builtin-"+r.builtin, verb, res, ns) {
						if time.Now().After(deadline) {
							t.Fatalf("the built-in %s role never gained %s %s from %s", r.builtin, verb, res, r.name)
						}
						time.Sleep(200 * time.Millisecond)
					}
				}
			}
		})
	}
}

// peopleTable parses docs/rbac.md's people table into role -> resource ->
// allowed verbs.
func peopleTable(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "| resource | gluster-view |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != len(personRoles)+1 {
				t.Fatalf("docs/rbac.md row %q: want a resource and one cell per role", line)
			}
			res := strings.TrimSpace(cells[0])
			if _, ok := resourceGroup[strings.Split(res, "/")[0]]; !ok {
				t.Fatalf("docs/rbac.md names %q, whose API group this test does not know", res)
			}
			for i, r := range personRoles {
				if out[r.name] == nil {
					out[r.name] = map[string][]string{}
				}
				var verbs []string
				if c := strings.TrimSpace(cells[i+1]); c != "—" {
					verbs = strings.Split(c, ", ")
				}
				out[r.name][res] = verbs
			}
		case in:
			return out
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/rbac.md has no people table")
	}
	return out
}

// applyClusterRoles creates (or updates) every ClusterRole in file.
func applyClusterRoles(ctx context.Context, t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var cr rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &cr); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		roles := env.Client.RbacV1().ClusterRoles()
		_, err = roles.Create(ctx, &cr, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, gerr := roles.Get(ctx, cr.Name, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			cr.ResourceVersion = cur.ResourceVersion
			_, err = roles.Update(ctx, &cr, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("apply ClusterRole %s: %v", cr.Name, err)
		}
	}
}

// bind gives user the ClusterRole role in namespace ns only.
func bind(ctx context.Context, t *testing.T, ns, user, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := env.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// can asks the API server whether user may verb resource (which may name
// a subresource: "glusterclusters/status") in namespace ns.
func can(ctx context.Context, t *testing.T, user, verb, resource, ns string) bool {
	t.Helper()
	res, sub, _ := strings.Cut(resource, "/")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: []string{"system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: resourceGroup[res], Resource: res, Subresource: sub,
		},
	}}
	got, err := env.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview %s %s %s: %v", user, verb, resource, err)
	}
	return got.Status.Allowed
}
