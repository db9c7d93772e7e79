package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
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

// personRoles are the columns of docs/rbac.md's first people table, in
// order, ClusterRoles, with the built-in role each aggregates into (none
// for gluster-toolbox).
var personRoles = []struct{ name, builtin string }{
	{"gluster-view", "view"}, {"gluster-edit", "edit"}, {"gluster-admin", "admin"}, {"gluster-toolbox", ""},
}

// operatorRoles are the columns of its second people table: Roles in the
// operator's namespace.
var operatorRoles = []string{"gluster-operator-health"}

// The people tables' header rows start so.
const (
	personTableHeader   = "| resource | gluster-view |"
	operatorTableHeader = "| resource | gluster-operator-health |"
)

// matrixVerbs are the verbs every cell of the matrix is asked about.
var matrixVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// resourceGroup is the API group of each resource the people table names.
var resourceGroup = map[string]string{
	"glusterclusters": "operator.gluster.org", "glusternodes": "operator.gluster.org",
	"events": "", "pods": "", "secrets": "", "persistentvolumeclaims": "", "statefulsets": "apps",
	"deployments": "apps", "leases": "coordination.k8s.io",
}

// namedRow is a people-table resource limited by name:
// "leases (`anthill-operator` only)".
var namedRow = regexp.MustCompile("^(\\S+) \\(`([^`]+)` only\\)$")

// TestPersonRolesCanDoExactlyWhatTheDocSays binds each person role of
// manifests/rbac/person_roles.yaml to a user, a ClusterRole in one
// namespace and the Role in the operator's, and asks the API server
// (SubjectAccessReview) about every verb on every resource of
// docs/rbac.md's people tables: allowed exactly where the table says so in
// that namespace, and nothing in another namespace. A second user holding
// only the built-in role a person role aggregates into gets the same
// Gluster permissions, through the real aggregation controller.
func TestPersonRolesCanDoExactlyWhatTheDocSays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := framework.RepoRoot()
	doc := filepath.Join(root, "docs", "rbac.md")
	want := peopleTable(t, doc, personTableHeader, len(personRoles))
	wantOperator := peopleTable(t, doc, operatorTableHeader, len(operatorRoles))

	const ns, other, opNs = "rbac-matrix", "rbac-matrix-other", "rbac-matrix-operator"
	for _, n := range []string{ns, other, opNs} {
		if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	applyPersonRoles(ctx, t, filepath.Join(root, "manifests", "rbac", "person_roles.yaml"), opNs)
	for _, r := range personRoles {
		bind(ctx, t, ns, "person-"+r.name, r.name)
		if r.builtin != "" {
			bind(ctx, t, ns, "builtin-"+r.builtin, r.builtin)
		}
	}
	for _, r := range operatorRoles {
		bindRole(ctx, t, opNs, "person-"+r, r)
	}

	// matrix checks every verb on every row of one role's column: allowed
	// as the table says in namespace in, never in any of others.
	matrix := func(t *testing.T, role string, rows map[string][]string, in string, others ...string) {
		for res, allowed := range rows {
			for _, verb := range matrixVerbs {
				wantAllowed := slices.Contains(allowed, verb)
				if got := can(ctx, t, "person-"+role, verb, res, in); got != wantAllowed {
					t.Errorf("%s in its namespace: %s %s allowed=%v, docs/rbac.md says %v", role, verb, res, got, wantAllowed)
				}
				for _, o := range others {
					if can(ctx, t, "person-"+role, verb, res, o) {
						t.Errorf("%s bound in %s may %s %s in %s", role, in, verb, res, o)
					}
				}
			}
		}
	}
	for i, r := range personRoles {
		t.Run(r.name, func(t *testing.T) { matrix(t, r.name, want[i], ns, other, opNs) })
	}
	for i, r := range operatorRoles {
		t.Run(r, func(t *testing.T) { matrix(t, r, wantOperator[i], opNs, ns, other) })
	}

	// Aggregation is done by kube-controller-manager, asynchronously: wait
	// until the built-in roles include the person roles' rules.
	for i, r := range personRoles {
		if r.builtin == "" {
			continue
		}
		t.Run("aggregated into "+r.builtin, func(t *testing.T) {
			for _, res := range []string{"glusterclusters", "glusternodes"} {
				for _, verb := range want[i][res] {
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

// peopleTable parses the docs/rbac.md table whose header row starts with
// header, of roles role columns, into one map per column: resource (as the
// table spells it) -> allowed verbs.
func peopleTable(t *testing.T, path, header string, roles int) []map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string][]string, roles)
	for i := range out {
		out[i] = map[string][]string{}
	}
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			if n := strings.Count(strings.Trim(line, "|"), "|"); n != roles {
				t.Fatalf("docs/rbac.md table %q has %d role columns, this test knows %d", header, n, roles)
			}
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != roles+1 {
				t.Fatalf("docs/rbac.md row %q: want a resource and one cell per role", line)
			}
			res := strings.TrimSpace(cells[0])
			name := res
			if m := namedRow.FindStringSubmatch(res); m != nil {
				name = m[1]
			}
			if _, ok := resourceGroup[strings.Split(name, "/")[0]]; !ok {
				t.Fatalf("docs/rbac.md names %q, whose API group this test does not know", res)
			}
			for i := range out {
				var verbs []string
				if c := strings.TrimSpace(cells[i+1]); c != "—" {
					verbs = strings.Split(c, ", ")
				}
				out[i][res] = verbs
			}
		case in:
			return out
		}
	}
	if !in {
		t.Fatalf("docs/rbac.md has no table starting %q", header)
	}
	return out
}

// applyPersonRoles creates (or updates) every ClusterRole in file, and
// every Role in namespace roleNS (as the chart and OLM put it in the
// operator's namespace, whatever the file says).
func applyPersonRoles(ctx context.Context, t *testing.T, file, roleNS string) {
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
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		switch meta.Kind {
		case "ClusterRole":
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
		case "Role":
			var role rbacv1.Role
			if err := yaml.UnmarshalStrict(doc, &role); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			role.Namespace = roleNS
			roles := env.Client.RbacV1().Roles(roleNS)
			_, err = roles.Create(ctx, &role, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				cur, gerr := roles.Get(ctx, role.Name, metav1.GetOptions{})
				if gerr != nil {
					t.Fatal(gerr)
				}
				role.ResourceVersion = cur.ResourceVersion
				_, err = roles.Update(ctx, &role, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatalf("apply Role %s/%s: %v", roleNS, role.Name, err)
			}
		default:
			t.Fatalf("%s holds a %s; person roles are ClusterRoles and Roles", file, meta.Kind)
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

// bindRole gives user the Role role of namespace ns.
func bindRole(ctx context.Context, t *testing.T, ns, user, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := env.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// can asks the API server whether user may verb resource (which may name
// a subresource, "glusterclusters/status", or one object, "leases
// (`anthill-operator` only)") in namespace ns.
func can(ctx context.Context, t *testing.T, user, verb, resource, ns string) bool {
	t.Helper()
	name := ""
	if m := namedRow.FindStringSubmatch(resource); m != nil {
		resource, name = m[1], m[2]
	}
	res, sub, _ := strings.Cut(resource, "/")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: []string{"system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: resourceGroup[res], Resource: res, Subresource: sub, Name: name,
		},
	}}
	got, err := env.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview %s %s %s: %v", user, verb, resource, err)
	}
	return got.Status.Allowed
}
