package framework

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/gluster/anthill/manifests"
)

const usageRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: op
rules:
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["get", "list"]
  - apiGroups: ["apps"]
    resources: ["statefulsets", "statefulsets/status"]
    verbs: ["update"]
  - apiGroups: [""]
    resources: ["persistentvolumes"]
    verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: op
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: op}
subjects:
  - {kind: ServiceAccount, name: anthill-operator, namespace: anthill-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: lease
  namespace: anthill-system
rules:
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    resourceNames: ["anthill-operator"]
    verbs: ["update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: lease
  namespace: anthill-system
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: lease}
subjects:
  - {kind: ServiceAccount, name: anthill-operator, namespace: anthill-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: bound-to-someone-else
rules:
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["get"]
`

func usagePermissions(t *testing.T) []Permission {
	t.Helper()
	perms, err := OperatorPermissions(fstest.MapFS{"rbac/roles.yaml": {Data: []byte(usageRBAC)}})
	if err != nil {
		t.Fatal(err)
	}
	return perms
}

func use(test string, at int, names ...string) *RequestUse {
	u := &RequestUse{Allowed: 1, FirstTest: test, FirstAt: time.Unix(int64(at), 0), Names: map[string]bool{}}
	for _, n := range names {
		u.Names[n] = true
	}
	return u
}

func TestOperatorPermissionsExpandsEveryVerbAndResourceOfTheOperatorsRoles(t *testing.T) {
	var got []string
	for _, p := range usagePermissions(t) {
		got = append(got, p.String())
	}
	want := []string{
		"get core/pods — ClusterRole op rule 0, manifests/rbac/roles.yaml",
		"list core/pods — ClusterRole op rule 0, manifests/rbac/roles.yaml",
		"update apps/statefulsets — ClusterRole op rule 1, manifests/rbac/roles.yaml",
		"update apps/statefulsets/status — ClusterRole op rule 1, manifests/rbac/roles.yaml",
		"create core/persistentvolumes — ClusterRole op rule 2, manifests/rbac/roles.yaml",
		"update coordination.k8s.io/leases (names anthill-operator) in namespace anthill-system — Role anthill-system/lease rule 0, manifests/rbac/roles.yaml",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("permissions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// allUses covers every permission of usageRBAC but create persistentvolumes.
func allUses() map[Request]*RequestUse {
	return map[Request]*RequestUse{
		{Verb: "get", Resource: "pods", Namespace: "ns1"}:                                                  use("TestB", 20),
		{Verb: "get", Resource: "pods", Namespace: "ns0"}:                                                  use("TestA", 10),
		{Verb: "list", Resource: "pods"}:                                                                   use("TestMain", 1),
		{Verb: "update", Group: "apps", Resource: "statefulsets", Namespace: "ns1"}:                        use("TestB", 21),
		{Verb: "update", Group: "apps", Resource: "statefulsets", Subresource: "status", Namespace: "ns1"}: use("TestB", 22),
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "anthill-system"}:    use("TestMain", 2, "anthill-operator"),
	}
}

func TestCheckRBACUsageFailsOnAPermissionNeverUsed(t *testing.T) {
	rep := CheckRBACUsage(usagePermissions(t), allUses(), nil, nil)
	if rep.OK() || len(rep.Unused) != 1 || rep.Unused[0].Verb != "create" || rep.Unused[0].Resource != "persistentvolumes" {
		t.Fatalf("unused %v, want only create persistentvolumes", rep.Unused)
	}
	var out bytes.Buffer
	rep.Write(&out)
	for _, want := range []string{
		"never used by the operator in the suite: create core/persistentvolumes — ClusterRole op rule 2, manifests/rbac/roles.yaml",
		"manifests/rbac/roles.yaml ClusterRole op rule 0: get pods: TestA; list pods: TestMain",
		"rbac usage: FAILED: 1 of 6 permissions never used",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCheckRBACUsageCountsOnlyAllowedRequestsInTheGrantsScopeAndNames(t *testing.T) {
	uses := allUses()
	uses[Request{Verb: "create", Resource: "persistentvolumes"}] = &RequestUse{Denied: 3, FirstTest: "TestC", Names: map[string]bool{}}
	// The Role grants the lease in anthill-system only, and by name.
	delete(uses, Request{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "anthill-system"})
	uses[Request{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "other"}] = use("TestD", 3, "anthill-operator")
	uses[Request{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "anthill-system"}] = use("TestE", 4, "someone-else")
	rep := CheckRBACUsage(usagePermissions(t), uses, nil, nil)
	var unused []string
	for _, p := range rep.Unused {
		unused = append(unused, p.Verb+" "+p.Resource)
	}
	if got := strings.Join(unused, ", "); got != "create persistentvolumes, update leases" {
		t.Fatalf("unused %q", got)
	}
}

func TestCheckRBACUsageAcceptsAGrantOnwardOnlyWhenTheRoleIsCreated(t *testing.T) {
	onward := []OnwardGrants{{
		Creator: Request{Verb: "create", Group: rbacv1.GroupName, Resource: "clusterroles"},
		Rules:   []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"create"}}},
	}}
	if rep := CheckRBACUsage(usagePermissions(t), allUses(), onward, nil); rep.OK() {
		t.Fatal("granted onward without the operator ever creating the role")
	}
	uses := allUses()
	uses[Request{Verb: "create", Group: rbacv1.GroupName, Resource: "clusterroles"}] = use("TestCSI", 30)
	rep := CheckRBACUsage(usagePermissions(t), uses, onward, nil)
	if !rep.OK() {
		t.Fatalf("unused %v", rep.Unused)
	}
	if len(rep.Outside) != 1 || rep.Outside[0].Resource != "clusterroles" {
		t.Fatalf("outside %v, want the clusterroles create (not granted by usageRBAC)", rep.Outside)
	}
	var out bytes.Buffer
	rep.Write(&out)
	for _, want := range []string{"create persistentvolumes: granted onward, first by TestCSI",
		"all 6 permissions of the operator's RBAC are used (5 directly, 1 granted onward, 0 exempt)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCheckRBACUsageExemptionsMustMatchAndStayUnused(t *testing.T) {
	doc := `# RBAC

` + ExemptionsHeading + `

| group | resource | verb | why |
|---|---|---|---|
| core | persistentvolumes | create | nothing in the suite creates one |
| apps | statefulsets/status | update | listed, but used |
| core | configmaps | get | granted to someone else |

## Next section

| core | secrets | get | not part of the list |
`
	exempt, err := ParseExemptions(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(exempt) != 3 || exempt[0].Group != "" || exempt[1].Resource != "statefulsets/status" {
		t.Fatalf("exemptions %+v", exempt)
	}
	rep := CheckRBACUsage(usagePermissions(t), allUses(), nil, exempt)
	if len(rep.Unused) != 0 {
		t.Fatalf("unused %v", rep.Unused)
	}
	if len(rep.StaleExemptions) != 2 || rep.OK() {
		t.Fatalf("stale %q, want the used statefulsets/status and the configmaps the operator is not granted", rep.StaleExemptions)
	}
	if _, err := ParseExemptions(strings.NewReader("# RBAC\n")); err == nil {
		t.Fatal("a document without the exemption section parsed")
	}
	if _, err := ParseExemptions(strings.NewReader(ExemptionsHeading + "\n| core | pods | get | |\n")); err == nil {
		t.Fatal("an exemption without a reason parsed")
	}
}

func TestRecorderCountsTheOperatorsRequestsOncePerRequestAndNamesTheTest(t *testing.T) {
	a := NewAuditRecorder(OperatorUser)
	t0 := time.Unix(1000, 0)
	a.TestBegins("TestA", "ns-a", t0)
	a.TestBegins("TestB", "ns-b", t0.Add(10*time.Second))
	ev := func(stage, verb, ns, name string, code int, at time.Time, impersonated string) *auditEvent {
		e := &auditEvent{Stage: stage, Verb: verb, RequestReceivedTimestamp: at}
		e.User.Username = operatorImpersonator
		if impersonated != "" {
			e.ImpersonatedUser = &struct {
				Username string `json:"username"`
			}{impersonated}
		}
		e.ObjectRef = &struct {
			Resource    string `json:"resource"`
			Namespace   string `json:"namespace"`
			Name        string `json:"name"`
			APIGroup    string `json:"apiGroup"`
			Subresource string `json:"subresource"`
		}{Resource: "pods", Namespace: ns, Name: name}
		e.ResponseStatus = &struct {
			Code int `json:"code"`
		}{code}
		return e
	}
	a.add(ev("ResponseStarted", "watch", "", "", 200, t0.Add(-time.Second), OperatorUser))
	a.add(ev("ResponseComplete", "watch", "", "", 200, t0.Add(-time.Second), OperatorUser))
	a.add(ev("ResponseComplete", "get", "ns-a", "p", 200, t0.Add(20*time.Second), OperatorUser))
	a.add(ev("ResponseComplete", "get", "ns-b", "q", 403, t0.Add(1*time.Second), OperatorUser))
	a.add(ev("ResponseComplete", "get", "", "n", 200, t0.Add(15*time.Second), OperatorUser))
	a.add(ev("ResponseComplete", "get", "ns-a", "p", 200, t0, "someone-else"))
	uses := a.Uses()
	if u := uses[Request{Verb: "watch", Resource: "pods"}]; u == nil || u.Allowed != 1 || u.FirstTest != "TestMain" {
		t.Fatalf("watch: %+v, want one, before any test", u)
	}
	if u := uses[Request{Verb: "get", Resource: "pods", Namespace: "ns-a"}]; u == nil || u.Allowed != 1 || u.FirstTest != "TestA" || !u.Names["p"] {
		t.Fatalf("get in ns-a: %+v, want one by TestA (by namespace, though TestB had begun)", u)
	}
	if u := uses[Request{Verb: "get", Resource: "pods", Namespace: "ns-b"}]; u == nil || u.Denied != 1 || u.Allowed != 0 {
		t.Fatalf("get in ns-b: %+v, want one denied", u)
	}
	if u := uses[Request{Verb: "get", Resource: "pods"}]; u == nil || u.FirstTest != "TestB" {
		t.Fatalf("cluster-scoped get: %+v, want TestB (the test running then)", u)
	}
	if len(uses) != 4 {
		t.Fatalf("%d request shapes, want 4 (another user's request is not the operator's)", len(uses))
	}
}

// TestShippedOperatorRBACExpandsAndItsExemptionsParse keeps the inputs of
// the e2e check readable: the shipped roles bound to the operator expand,
// and docs/rbac.md's exemption table parses, naming only granted
// permissions.
func TestShippedOperatorRBACExpandsAndItsExemptionsParse(t *testing.T) {
	perms, err := OperatorPermissions(manifests.RBAC)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(RepoRoot(), "docs", "rbac.md"))
	if err != nil {
		t.Fatal(err)
	}
	exempt, err := ParseExemptions(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	// With every permission "used" by an exemption-free fake, the only
	// stale exemptions are those naming no granted permission.
	rep := CheckRBACUsage(perms, nil, nil, exempt)
	for _, s := range rep.StaleExemptions {
		if strings.Contains(s, "matches no permission") {
			t.Error(s)
		}
	}
	if len(perms) < 50 {
		t.Fatalf("only %d permissions expanded from manifests/rbac", len(perms))
	}
}

func TestRecorderCountsAStreamedListAsAList(t *testing.T) {
	a := NewAuditRecorder(OperatorUser)
	e := &auditEvent{Stage: "ResponseStarted", Verb: "watch", RequestURI: "/apis/apps/v1/statefulsets?allowWatchBookmarks=true&sendInitialEvents=true&watch=true"}
	e.User.Username = OperatorUser
	e.ObjectRef = &struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	}{Resource: "statefulsets", APIGroup: "apps"}
	a.add(e)
	uses := a.Uses()
	if uses[Request{Verb: "watch", Group: "apps", Resource: "statefulsets"}] == nil ||
		uses[Request{Verb: "list", Group: "apps", Resource: "statefulsets", Streamed: true}] == nil || len(uses) != 2 {
		t.Fatalf("uses %v, want the watch and a streamed list", uses)
	}
	perms := usagePermissions(t)
	rep := CheckRBACUsage(perms, map[Request]*RequestUse{{Verb: "list", Resource: "pods", Streamed: true}: use("TestA", 1)}, nil, nil)
	for _, g := range rep.Used {
		if g.Verb == "list" && g.Resource == "pods" && g.Streamed && g.Test == "TestA" {
			return
		}
	}
	t.Fatalf("a streamed list did not use list pods: %+v", rep.Used)
}
