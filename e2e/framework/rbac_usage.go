package framework

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// The RBAC usage check: every permission the shipped operator RBAC grants
// must be used by the operator during the end-to-end suite, or be listed,
// with its reason, among the few the suite cannot exercise (docs/rbac.md).
// A grant nobody uses is a grant an attacker who takes the operator gets
// for free.

// Permission is one verb on one resource that one rule grants.
type Permission struct {
	// File is the manifest the rule is in (relative to manifests/), Role
	// its role ("ClusterRole anthill-operator"), Rule its index there.
	File, Role                         string
	Rule                               int
	Verb, Group, Resource, Subresource string
	// ResourceNames limits the rule to these objects.
	ResourceNames []string
	// Namespace is where the grant applies: empty for a ClusterRole bound
	// by a ClusterRoleBinding, the binding's namespace otherwise.
	Namespace string
}

func (p Permission) resource() string {
	if p.Subresource != "" {
		return p.Resource + "/" + p.Subresource
	}
	return p.Resource
}

func groupName(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

// String names the permission and where it comes from.
func (p Permission) String() string {
	s := fmt.Sprintf("%s %s/%s", p.Verb, groupName(p.Group), p.resource())
	if len(p.ResourceNames) > 0 {
		s += " (names " + strings.Join(p.ResourceNames, ", ") + ")"
	}
	if p.Namespace != "" {
		s += " in namespace " + p.Namespace
	}
	return s + fmt.Sprintf(" — %s rule %d, manifests/%s", p.Role, p.Rule, p.File)
}

// OperatorPermissions expands the roles bound to the operator's service
// account in fsys (manifests.RBAC) into one Permission per verb and
// resource of every rule.
func OperatorPermissions(fsys fs.FS) ([]Permission, error) {
	files, err := fs.Glob(fsys, "*/*.yaml")
	if err != nil {
		return nil, err
	}
	type role struct {
		file  string
		rules []rbacv1.PolicyRule
	}
	roles := map[string]role{} // "ClusterRole name" or "Role ns/name"
	type binding struct{ ref, ns string }
	var bindings []binding
	isOperator := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == OperatorServiceAccount && s.Namespace == OperatorNamespace {
				return true
			}
		}
		return false
	}
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		objs, err := decodeAll(raw)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", f, err)
		}
		for _, o := range objs {
			switch o := o.(type) {
			case *rbacv1.ClusterRole:
				roles["ClusterRole "+o.Name] = role{f, o.Rules}
			case *rbacv1.Role:
				roles["Role "+o.Namespace+"/"+o.Name] = role{f, o.Rules}
			case *rbacv1.ClusterRoleBinding:
				if isOperator(o.Subjects) {
					bindings = append(bindings, binding{ref: o.RoleRef.Kind + " " + o.RoleRef.Name})
				}
			case *rbacv1.RoleBinding:
				if isOperator(o.Subjects) {
					ref := o.RoleRef.Kind + " " + o.RoleRef.Name
					if o.RoleRef.Kind == "Role" {
						ref = "Role " + o.Namespace + "/" + o.RoleRef.Name
					}
					bindings = append(bindings, binding{ref: ref, ns: o.Namespace})
				}
			}
		}
	}
	var out []Permission
	for _, b := range bindings {
		r, ok := roles[b.ref]
		if !ok {
			return nil, fmt.Errorf("a binding of the operator refers to %s, which is not in the manifests", b.ref)
		}
		for i, rule := range r.rules {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					resource, sub, _ := strings.Cut(res, "/")
					for _, v := range rule.Verbs {
						out = append(out, Permission{File: r.file, Role: b.ref, Rule: i, Verb: v, Group: g,
							Resource: resource, Subresource: sub, ResourceNames: rule.ResourceNames, Namespace: b.ns})
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no role in the manifests is bound to %s", OperatorUser)
	}
	return out, nil
}

// Exemption is a permission the suite cannot exercise, with the reason.
type Exemption struct {
	Verb, Group, Resource, Reason string
}

// ExemptionsHeading starts the table of exemptions in docs/rbac.md.
const ExemptionsHeading = "### Permissions the end-to-end suite cannot exercise"

// ParseExemptions reads the exemption table that follows
// ExemptionsHeading in a markdown document: columns group, resource
// (resource or resource/subresource), verb, why. An empty table is fine; a
// missing heading is an error, so the check cannot lose its list silently.
func ParseExemptions(doc io.Reader) ([]Exemption, error) {
	sc := bufio.NewScanner(doc)
	in, seen := false, false
	var out []Exemption
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == ExemptionsHeading {
			in, seen = true, true
			continue
		}
		if !in {
			continue
		}
		if strings.HasPrefix(l, "#") {
			break
		}
		if !strings.HasPrefix(l, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 4 {
			return nil, fmt.Errorf("exemption row %q: want 4 cells (group, resource, verb, why)", l)
		}
		if cells[0] == "group" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		if cells[3] == "" {
			return nil, fmt.Errorf("exemption row %q gives no reason", l)
		}
		g := strings.Trim(cells[0], "`")
		if g == "core" {
			g = ""
		}
		out = append(out, Exemption{Group: g, Resource: strings.Trim(cells[1], "`"), Verb: strings.Trim(cells[2], "`"), Reason: cells[3]})
	}
	if !seen {
		return nil, fmt.Errorf("no %q section", ExemptionsHeading)
	}
	return out, sc.Err()
}

// Grant is how one permission was found to be needed.
type Grant struct {
	Permission
	// Test is the test that first needed it, Request the request that
	// used it (empty when it was granted onward or is exempt).
	Test    string
	Request string
	// Streamed says the use was an informer's streamed list (a watch
	// with sendInitialEvents, Request.Streamed).
	Streamed bool
	// Onward says the operator never uses it itself but puts it in a role
	// it creates (Kubernetes lets only a holder grant a permission).
	Onward bool
	// Exempt is the documented reason the suite cannot exercise it.
	Exempt string
}

// UsageReport is the outcome of CheckRBACUsage.
type UsageReport struct {
	Used   []Grant
	Unused []Permission
	// StaleExemptions are exemptions that match no granted permission,
	// or one the suite did use: the list must shrink with them.
	StaleExemptions []string
	// Outside are allowed requests no operator permission covers (the
	// defaults every authenticated user has, such as self reviews).
	Outside []Request
}

// OK says every permission was used or is exempt, and no exemption is stale.
func (r UsageReport) OK() bool { return len(r.Unused) == 0 && len(r.StaleExemptions) == 0 }

// OnwardGrants are the rules of roles the operator creates for others:
// holding a permission they contain is needed, though the operator never
// uses it itself, as long as the operator really creates such a role
// (create on Creator in the recorded requests).
type OnwardGrants struct {
	Creator Request // Namespace ignored
	Rules   []rbacv1.PolicyRule
}

func (p Permission) covers(r Request, u *RequestUse) bool {
	if u.Allowed == 0 || p.Verb != r.Verb || p.Group != r.Group || p.Resource != r.Resource || p.Subresource != r.Subresource {
		return false
	}
	if p.Namespace != "" && p.Namespace != r.Namespace {
		return false
	}
	if len(p.ResourceNames) == 0 {
		return true
	}
	for _, n := range p.ResourceNames {
		if u.Names[n] {
			return true
		}
	}
	return false
}

func ruleGrants(rule rbacv1.PolicyRule, p Permission) bool {
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	return has(rule.Verbs, p.Verb) && has(rule.APIGroups, p.Group) && has(rule.Resources, p.resource()) && len(rule.ResourceNames) == 0
}

// CheckRBACUsage compares the granted permissions with the recorded
// requests.
func CheckRBACUsage(perms []Permission, uses map[Request]*RequestUse, onward []OnwardGrants, exempt []Exemption) UsageReport {
	var rep UsageReport
	reqs := make([]Request, 0, len(uses))
	for r := range uses {
		reqs = append(reqs, r)
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].String() < reqs[j].String() })
	covered := map[Request]bool{}
	usedExemption := map[int]bool{}
	for _, p := range perms {
		var first *RequestUse
		var firstReq Request
		for _, r := range reqs {
			u := uses[r]
			if !p.covers(r, u) {
				continue
			}
			covered[r] = true
			if first == nil || u.FirstAt.Before(first.FirstAt) {
				first, firstReq = u, r
			}
		}
		ex := -1
		for i, e := range exempt {
			if e.Verb == p.Verb && e.Group == p.Group && e.Resource == p.resource() {
				ex = i
			}
		}
		if ex >= 0 {
			usedExemption[ex] = true
		}
		switch {
		case first != nil:
			if ex >= 0 {
				rep.StaleExemptions = append(rep.StaleExemptions, fmt.Sprintf("%s is listed as not exercisable, but %s used it", p, first.FirstTest))
			}
			rep.Used = append(rep.Used, Grant{Permission: p, Test: first.FirstTest, Request: firstReq.String(), Streamed: firstReq.Streamed})
			continue
		case ex >= 0:
			rep.Used = append(rep.Used, Grant{Permission: p, Exempt: exempt[ex].Reason})
			continue
		}
		if g, ok := grantedOnward(p, uses, onward); ok {
			rep.Used = append(rep.Used, g)
			continue
		}
		rep.Unused = append(rep.Unused, p)
	}
	for i, e := range exempt {
		if !usedExemption[i] {
			rep.StaleExemptions = append(rep.StaleExemptions, fmt.Sprintf("the exemption of %s %s/%s matches no permission the operator is granted", e.Verb, groupName(e.Group), e.Resource))
		}
	}
	for _, r := range reqs {
		if !covered[r] && uses[r].Allowed > 0 {
			rep.Outside = append(rep.Outside, r)
		}
	}
	return rep
}

func grantedOnward(p Permission, uses map[Request]*RequestUse, onward []OnwardGrants) (Grant, bool) {
	for _, o := range onward {
		granted := false
		for _, rule := range o.Rules {
			granted = granted || ruleGrants(rule, p)
		}
		if !granted {
			continue
		}
		var first *RequestUse
		for r, u := range uses {
			c := o.Creator
			if r.Verb == c.Verb && r.Group == c.Group && r.Resource == c.Resource && r.Subresource == c.Subresource && u.Allowed > 0 &&
				(first == nil || u.FirstAt.Before(first.FirstAt)) {
				first = u
			}
		}
		if first != nil {
			return Grant{Permission: p, Test: first.FirstTest, Onward: true}, true
		}
	}
	return Grant{}, false
}

// Write prints the report: per rule, each verb and the test that first
// needed it; then what is wrong, if anything; then one summary line.
func (r UsageReport) Write(w io.Writer) {
	type key struct {
		file, role string
		rule       int
	}
	byRule := map[key][]string{}
	var keys []key
	add := func(k key, s string) {
		if _, ok := byRule[k]; !ok {
			keys = append(keys, k)
		}
		byRule[k] = append(byRule[k], s)
	}
	var onward, exempt int
	for _, g := range r.Used {
		k := key{g.File, g.Role, g.Rule}
		switch {
		case g.Exempt != "":
			exempt++
			add(k, fmt.Sprintf("%s %s: exempt (%s)", g.Verb, g.resource(), g.Exempt))
		case g.Onward:
			onward++
			add(k, fmt.Sprintf("%s %s: granted onward, first by %s", g.Verb, g.resource(), g.Test))
		case g.Streamed:
			add(k, fmt.Sprintf("%s %s: %s (streamed)", g.Verb, g.resource(), g.Test))
		default:
			add(k, fmt.Sprintf("%s %s: %s", g.Verb, g.resource(), g.Test))
		}
	}
	for _, p := range r.Unused {
		add(key{p.File, p.Role, p.Rule}, fmt.Sprintf("%s %s: NEVER USED", p.Verb, p.resource()))
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].file != keys[j].file {
			return keys[i].file < keys[j].file
		}
		return keys[i].rule < keys[j].rule
	})
	fmt.Fprintln(w, "rbac usage: the test that first needed each permission of the operator, per rule:")
	for _, k := range keys {
		fmt.Fprintf(w, "  manifests/%s %s rule %d: %s\n", k.file, k.role, k.rule, strings.Join(byRule[k], "; "))
	}
	for _, req := range r.Outside {
		fmt.Fprintf(w, "  allowed by no operator rule (a default of every user): %s\n", req)
	}
	for _, p := range r.Unused {
		fmt.Fprintf(w, "rbac usage: granted but never used by the operator in the suite: %s\n", p)
	}
	for _, s := range r.StaleExemptions {
		fmt.Fprintf(w, "rbac usage: stale exemption in docs/rbac.md: %s\n", s)
	}
	total := len(r.Used) + len(r.Unused)
	if r.OK() {
		fmt.Fprintf(w, "rbac usage: all %d permissions of the operator's RBAC are used (%d directly, %d granted onward, %d exempt)\n",
			total, total-onward-exempt, onward, exempt)
		return
	}
	fmt.Fprintf(w, "rbac usage: FAILED: %d of %d permissions never used, %d stale exemption(s); remove the rule, add a test that needs it, or list it with its reason in docs/rbac.md (%q)\n",
		len(r.Unused), total, len(r.StaleExemptions), ExemptionsHeading)
}

// OperatorOnwardGrants are the roles the operator creates for others: the
// CSI provisioner's ClusterRole of every GlusterCluster with drivers
// (kube/objects), which the operator may create only while it holds each
// of its rules itself.
func OperatorOnwardGrants() []OnwardGrants {
	role := objects.CSIClusterRole(&operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}})
	return []OnwardGrants{{
		Creator: Request{Verb: "create", Group: rbacv1.GroupName, Resource: "clusterroles"},
		Rules:   role.Rules,
	}}
}
