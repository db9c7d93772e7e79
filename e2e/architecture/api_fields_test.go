package architecture

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// This file proves that the operator.gluster.org API promises nothing the
// operator ignores: every spec field is read, and every status field is
// written, by the code that ships in bin/anthill. A field that only the API
// server looks at (a CEL rule refuses it) must say so in apiServerOnly.

const apisPath = module + "/kube/apis/operator/v1alpha1"

// apiServerOnly lists the fields, by kind and JSON path, that no operator
// code reads or writes because they exist only for admission. The test
// fails when an entry's field is gone, or is read after all: the entry is
// then stale and must go.
var apiServerOnly = map[string]string{
	// A node's storage inherits vdo from its template so that the same
	// refusal applies to a GlusterNode written by hand; a CEL rule rejects
	// true, so the operator only ever sees false.
	"GlusterNode spec.storage.vdo": "refused at admission when true: GD2 cannot put a VDO layer under a brick",
	// Kept so that an old object's field is named in the refusal.
	"GlusterCluster spec.csi.blockImage": "refused at admission: no GD2-era block CSI driver exists that anthill can run",
}

// apiKinds are the API's root types and the CRD files that serve them.
var apiKinds = []struct {
	kind string
	crd  string
	typ  reflect.Type
}{
	{"GlusterCluster", "operator.gluster.org_glusterclusters.yaml", reflect.TypeFor[operatorv1alpha1.GlusterCluster]()},
	{"GlusterNode", "operator.gluster.org_glusternodes.yaml", reflect.TypeFor[operatorv1alpha1.GlusterNode]()},
}

// apiField is one field of the API below spec or status.
type apiField struct {
	kind   string
	path   string    // JSON path from the object: spec.nodeTemplates[].storage.capacity
	status bool      // under status: the operator must write it; under spec, read it
	chain  []fieldID // the Go fields from the root's Spec or Status down to this one
	// leaf says the field's type is not the API package's own (a Quantity,
	// a metav1.Condition, a corev1.NodeAffinity): its contents are not
	// walked, and it counts as used when the field itself is.
	leaf bool
}

// fieldID names a Go struct field of the API package.
type fieldID struct{ typ, field string }

func (f fieldID) String() string { return f.typ + "." + f.field }

func TestEveryAPIFieldIsUsed(t *testing.T) {
	var fields []apiField
	for _, k := range apiKinds {
		own := goFields(t, k.kind, k.typ)
		checkCRDAgrees(t, k.kind, k.crd, own)
		fields = append(fields, own...)
	}

	uses := operatorFieldUses(t)
	if len(uses.read) < 20 || len(uses.written) < 20 {
		t.Fatalf("found only %d read and %d written API fields: the source walk is broken", len(uses.read), len(uses.written))
	}

	exists := map[string]bool{}
	var unused []string
	for _, f := range fields {
		key := f.kind + " " + f.path
		exists[key] = true
		used, verb := uses.read, "read"
		if f.status {
			used, verb = uses.written, "written"
		}
		var missing []string
		for _, id := range f.chain {
			if !used[id] {
				missing = append(missing, id.String())
			}
		}
		reason, allowed := apiServerOnly[key]
		switch {
		case len(missing) == 0 && allowed:
			t.Errorf("%s is %s by the operator, but apiServerOnly says %q: remove the entry", key, verb, reason)
		case len(missing) > 0 && !allowed:
			unused = append(unused, fmt.Sprintf("%s: no operator code has %s %s", key, verb, strings.Join(missing, ", ")))
		}
	}
	for key := range apiServerOnly {
		if !exists[key] {
			t.Errorf("apiServerOnly lists %s, which is not a field of the API", key)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		t.Errorf("API fields the operator ignores (make the operator honour them, remove them, or, if only the API server needs them, list them in apiServerOnly with the reason):\n  %s",
			strings.Join(unused, "\n  "))
	}
}

// goFields walks the Go type of a root object below Spec and Status.
func goFields(t *testing.T, kind string, root reflect.Type) []apiField {
	t.Helper()
	var out []apiField
	for _, top := range []string{"Spec", "Status"} {
		f, ok := root.FieldByName(top)
		if !ok {
			t.Fatalf("%s has no field %s", kind, top)
		}
		walkGoFields(t, &out, kind, jsonName(f), top == "Status", nil, f.Type)
	}
	return out
}

func walkGoFields(t *testing.T, out *[]apiField, kind, path string, status bool, chain []fieldID, typ reflect.Type) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := jsonName(f)
		if name == "" || name == "-" {
			t.Fatalf("%s.%s has no JSON name: the walk cannot map it to the schema", typ.Name(), f.Name)
		}
		p := path + "." + name
		c := append(slices.Clone(chain), fieldID{typ.Name(), f.Name})
		ft, list := f.Type, false
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			list = list || ft.Kind() == reflect.Slice
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Map && ft.Elem().PkgPath() == apisPath {
			t.Fatalf("%s is a map of %s: walkGoFields does not descend into maps of API types yet", p, ft.Elem().Name())
		}
		own := ft.Kind() == reflect.Struct && ft.PkgPath() == apisPath
		*out = append(*out, apiField{kind: kind, path: p, status: status, chain: c, leaf: !own})
		if own {
			if list {
				p += "[]"
			}
			walkGoFields(t, out, kind, p, status, c, ft)
		}
	}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// checkCRDAgrees fails unless the generated CRD's schema has exactly the
// fields the Go type has, down to the Go walk's leaves.
func checkCRDAgrees(t *testing.T, kind, file string, fields []apiField) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "manifests", "crds", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(crd.Spec.Versions) == 0 {
		t.Fatalf("%s: no versions", file)
	}
	leaves := map[string]bool{}
	goPaths := map[string]bool{}
	for _, f := range fields {
		goPaths[f.path] = true
		leaves[f.path] = f.leaf
	}
	// Every served version has the Go types' schema (docs/api.md, "Versions").
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			t.Fatalf("%s %s: no schema", file, v.Name)
		}
		schemaPaths := map[string]bool{}
		root := v.Schema.OpenAPIV3Schema
		for _, top := range []string{"spec", "status"} {
			s, ok := root.Properties[top]
			if !ok {
				t.Fatalf("%s %s: the schema has no %s", file, v.Name, top)
			}
			walkSchema(s, top, leaves, schemaPaths)
		}
		for p := range goPaths {
			if !schemaPaths[p] {
				t.Errorf("%s %s is a Go field but not in %s %s: run make generate", kind, p, file, v.Name)
			}
		}
		for p := range schemaPaths {
			if !goPaths[p] {
				t.Errorf("%s %s is in %s %s but not a Go field: run make generate", kind, p, file, v.Name)
			}
		}
	}
}

func walkSchema(s apiextensionsv1.JSONSchemaProps, path string, leaves, out map[string]bool) {
	for name, p := range s.Properties {
		pp := path + "." + name
		out[pp] = true
		if leaves[pp] {
			continue
		}
		walkSchema(p, pp, leaves, out)
		if p.Items != nil && p.Items.Schema != nil {
			walkSchema(*p.Items.Schema, pp+"[]", leaves, out)
		}
	}
}

// fieldUses says which API fields the operator's code reads and writes.
type fieldUses struct {
	read, written map[fieldID]bool
}

// skipPackage says whether a package of the operator binary is left out of
// the source walk: the API package itself (its deep-copy functions touch
// every field) and the generated clientset, listers and informers.
func skipPackage(path string) bool {
	return path == apisPath || strings.HasPrefix(path, module+"/kube/client/")
}

// operatorFieldUses type-checks, from source, the module's packages that go
// into bin/anthill (everything else imported from the compiler's export
// data, so the walk costs a build of the binary), and records every
// selection of an API field and every composite-literal key naming one.
func operatorFieldUses(t *testing.T) fieldUses {
	t.Helper()
	imp, own := typeCheckModule(t, "./cmd/anthill", func(path string) bool { return !skipPackage(path) })
	apis, err := imp.Import(apisPath)
	if err != nil {
		t.Fatalf("import %s: %v", apisPath, err)
	}
	fields := map[*types.Var]fieldID{}
	for _, name := range apis.Scope().Names() {
		tn, ok := apis.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for i := range st.NumFields() {
			fields[st.Field(i)] = fieldID{name, st.Field(i).Name()}
		}
	}

	uses := fieldUses{read: map[fieldID]bool{}, written: map[fieldID]bool{}}
	for _, p := range own {
		for _, f := range p.files {
			recordFieldUses(f, p.info, fields, uses)
		}
	}
	if len(own) < 5 {
		t.Fatalf("walked only %d packages of bin/anthill", len(own))
	}
	return uses
}

// recordFieldUses records the API fields one file reads and writes.
//
// A selection x.F is a read unless it is the whole left-hand side of a
// plain assignment. It is a write when it starts a chain (x.F.G, x.F[i],
// *x.F) that ends on the left of an assignment, an increment, a range
// clause or a pointer-receiver method call, or under & (the address is
// taken to be written through, as meta.SetStatusCondition does). A
// composite-literal key F: v writes F.
func recordFieldUses(file *ast.File, info *types.Info, fields map[*types.Var]fieldID, uses fieldUses) {
	var stack []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if sel := info.Selections[n]; sel != nil && sel.Kind() == types.FieldVal {
				if id, ok := fields[sel.Obj().(*types.Var).Origin()]; ok {
					read, write := access(n, stack, info)
					uses.read[id] = uses.read[id] || read
					uses.written[id] = uses.written[id] || write
				}
			}
		case *ast.CompositeLit:
			typ := info.TypeOf(n)
			if ptr, ok := typ.(*types.Pointer); ok {
				typ = ptr.Elem() // an elided &T{...} in a []*T literal
			}
			st, ok := typ.Underlying().(*types.Struct)
			if !ok {
				break
			}
			for i, elt := range n.Elts {
				field := st.Field(i) // an unkeyed literal sets every field in order
				if kv, ok := elt.(*ast.KeyValueExpr); ok {
					key, _ := kv.Key.(*ast.Ident)
					v, _ := info.Uses[key].(*types.Var)
					if v == nil {
						continue
					}
					field = v
				}
				if id, ok := fields[field.Origin()]; ok {
					uses.written[id] = true
				}
			}
		}
		stack = append(stack, n)
		return true
	})
}

// access classifies one selection of a field by what encloses it; stack
// holds its ancestors, innermost last.
func access(e ast.Expr, stack []ast.Node, info *types.Info) (read, write bool) {
	var cur ast.Node = e
	direct := true // cur is the selection itself, not a chain built on it
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			cur = p
			continue
		case *ast.StarExpr:
			cur, direct = p, false
			continue
		case *ast.IndexExpr:
			if p.X == cur {
				cur, direct = p, false
				continue
			}
		case *ast.SliceExpr:
			if p.X == cur {
				cur, direct = p, false
				continue
			}
		case *ast.SelectorExpr:
			if p.X != cur {
				break
			}
			if sel := info.Selections[p]; sel != nil && sel.Kind() == types.MethodVal {
				_, ptr := sel.Obj().Type().(*types.Signature).Recv().Type().(*types.Pointer)
				return true, ptr
			}
			cur, direct = p, false
			continue
		case *ast.AssignStmt:
			for _, l := range p.Lhs {
				if l == cur {
					return !direct || p.Tok != token.ASSIGN, true
				}
			}
		case *ast.IncDecStmt:
			return true, true
		case *ast.RangeStmt:
			if p.Key == cur || p.Value == cur {
				return !direct, true
			}
		case *ast.UnaryExpr:
			if p.Op == token.AND {
				return true, true
			}
		}
		return true, false
	}
	return true, false
}
