//go:build e2e

package apiversions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/kube/storageversion"
	"github.com/gluster/anthill/manifests"
)

var crdNames = map[schema.GroupResource]string{
	clustersGR: "glusterclusters.operator.gluster.org",
	nodesGR:    "glusternodes.operator.gluster.org",
}

// TestStorageMigration is the upgrade from CRDs that store v1alpha1 to the
// shipped ones: objects written while v1alpha1 was the only version stay
// stored at v1alpha1 after the new CRDs are installed (etcd shows it), an
// interrupted migration changes nothing it has not finished, and
// `kubectl gluster migrate-storage` then rewrites every object at v1beta1
// and trims storedVersions to [v1beta1], with every object reading back as
// before (spec, status, metadata, generation). A rerun is a no-op.
func TestStorageMigration(t *testing.T) {
	plugin := framework.KubectlGlusterBinary.For(t)
	cp, typed, dyn := startControlPlane(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	crds, err := apiextensionsclient.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	installV1alpha1Only(ctx, t, crds)

	ns := cp.Namespace(t)
	var objs []ref
	for _, c := range fullClusters() {
		c.Namespace = ns
		created, err := typed.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, &c, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create GlusterCluster %s: %v", c.Name, err)
		}
		created.Status = c.Status
		if _, err := typed.OperatorV1alpha1().GlusterClusters(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, ref{clustersGR, ns, c.Name})
	}
	for _, n := range fullNodes() {
		n.Namespace = ns
		created, err := typed.OperatorV1alpha1().GlusterNodes(ns).Create(ctx, &n, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create GlusterNode %s: %v", n.Name, err)
		}
		created.Status = n.Status
		if _, err := typed.OperatorV1alpha1().GlusterNodes(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, ref{nodesGR, ns, n.Name})
	}
	before := readAll(ctx, t, dyn, objs)
	for _, o := range objs {
		if v := storedAPIVersion(ctx, t, cp, o); v != "operator.gluster.org/v1alpha1" {
			t.Fatalf("%s is stored as %q before the upgrade, want v1alpha1", o, v)
		}
	}

	// The upgrade installs the shipped CRDs: v1beta1 is stored from now on,
	// but nothing already in etcd moves.
	if err := cp.InstallCRDs(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range crdNames {
		if got := storedVersions(ctx, t, crds, name); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
			t.Fatalf("%s storedVersions after the upgrade = %v, want [v1alpha1 v1beta1]", name, got)
		}
	}
	for _, o := range objs {
		if v := storedAPIVersion(ctx, t, cp, o); v != "operator.gluster.org/v1alpha1" {
			t.Fatalf("%s is stored as %q right after the upgrade, want still v1alpha1", o, v)
		}
	}
	clients := storageversion.Clients{CRDs: crds, Dynamic: dyn}

	t.Run("an interrupted migration leaves storedVersions alone", func(t *testing.T) {
		ictx, stop := context.WithCancel(ctx)
		var seen []storageversion.Object
		_, err := storageversion.Migrate(ictx, clients, crdNames[clustersGR], func(o storageversion.Object) {
			seen = append(seen, o)
			stop()
		})
		stop()
		if !errors.Is(err, context.Canceled) || len(seen) != 1 || !seen[0].Rewritten {
			t.Fatalf("interrupted after the first object: err %v, visited %+v; want context.Canceled after one rewrite", err, seen)
		}
		if got := storedVersions(ctx, t, crds, crdNames[clustersGR]); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
			t.Fatalf("storedVersions after an interrupted run = %v, want [v1alpha1 v1beta1]", got)
		}
		first := ref{clustersGR, seen[0].Namespace, seen[0].Name}
		for _, o := range objs {
			want := "operator.gluster.org/v1alpha1"
			if o == first {
				want = "operator.gluster.org/v1beta1"
			}
			if v := storedAPIVersion(ctx, t, cp, o); v != want {
				t.Errorf("%s is stored as %q after the interrupted run, want %s", o, v, want)
			}
		}
	})

	t.Run("kubectl gluster migrate-storage moves every object to v1beta1", func(t *testing.T) {
		out := runPlugin(ctx, t, plugin, cp, "migrate-storage")
		for _, name := range crdNames {
			if !strings.Contains(out, name+": ") || !strings.Contains(out, "storedVersions [v1alpha1 v1beta1] -> [v1beta1]") {
				t.Errorf("migrate-storage printed no line for %s:\n%s", name, out)
			}
			if got := storedVersions(ctx, t, crds, name); !slices.Equal(got, []string{"v1beta1"}) {
				t.Errorf("%s storedVersions = %v, want [v1beta1]", name, got)
			}
		}
		for _, o := range objs {
			if v := storedAPIVersion(ctx, t, cp, o); v != "operator.gluster.org/v1beta1" {
				t.Errorf("%s is stored as %q after the migration, want v1beta1", o, v)
			}
		}
		after := readAll(ctx, t, dyn, objs)
		for _, o := range objs {
			unchanged(t, o, before[o], after[o])
		}
	})

	t.Run("a second run changes nothing", func(t *testing.T) {
		out := runPlugin(ctx, t, plugin, cp, "migrate-storage")
		for _, name := range crdNames {
			if !strings.Contains(out, name+": already stored only at v1beta1") {
				t.Errorf("second run for %s:\n%s", name, out)
			}
		}
		// Even with storedVersions put back, no object is written again:
		// their stored encoding is already v1beta1's.
		name := crdNames[nodesGR]
		crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		crd.Status.StoredVersions = []string{"v1alpha1", "v1beta1"}
		if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		before := readAll(ctx, t, dyn, objs)
		res, err := storageversion.Migrate(ctx, clients, name, nil)
		if err != nil || res.Rewritten != 0 || res.Unchanged != len(fullNodes()) {
			t.Fatalf("rerun: %+v, %v; want every node unchanged", res, err)
		}
		if got := storedVersions(ctx, t, crds, name); !slices.Equal(got, []string{"v1beta1"}) {
			t.Errorf("%s storedVersions = %v, want [v1beta1]", name, got)
		}
		after := readAll(ctx, t, dyn, objs)
		for _, o := range objs {
			if before[o].GetResourceVersion() != after[o].GetResourceVersion() {
				t.Errorf("%s was written again by the rerun", o)
			}
		}
	})
}

// ref names one object.
type ref struct {
	gr       schema.GroupResource
	ns, name string
}

func (r ref) String() string { return fmt.Sprintf("%s %s/%s", r.gr.Resource, r.ns, r.name) }

// readAll reads every object through v1alpha1.
func readAll(ctx context.Context, t *testing.T, dyn dynamic.Interface, objs []ref) map[ref]*unstructured.Unstructured {
	t.Helper()
	out := map[ref]*unstructured.Unstructured{}
	for _, o := range objs {
		u, err := dyn.Resource(at(o.gr, "v1alpha1")).Namespace(o.ns).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", o, err)
		}
		out[o] = u
	}
	return out
}

// unchanged fails unless before and after are the same object: equal in
// everything but resourceVersion (the rewrite is a write) — spec, status,
// labels, annotations, uid, generation, managedFields.
func unchanged(t *testing.T, o ref, before, after *unstructured.Unstructured) {
	t.Helper()
	b, a := before.DeepCopy(), after.DeepCopy()
	if b.GetResourceVersion() == a.GetResourceVersion() {
		t.Errorf("%s: resourceVersion did not move: the migration did not write it", o)
	}
	b.SetResourceVersion("")
	a.SetResourceVersion("")
	if diff := jsonDiff(b.Object, a.Object); diff != "" {
		t.Errorf("%s changed in the migration: %s", o, diff)
	}
	if _, ok := after.Object["status"]; !ok {
		t.Errorf("%s has no status after the migration", o)
	}
}

func jsonDiff(a, b map[string]any) string {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) == string(jb) {
		return ""
	}
	return fmt.Sprintf("\nbefore %s\n after %s", ja, jb)
}

// storedAPIVersion is the apiVersion of o as the API server wrote it to
// etcd (custom resources are stored as JSON).
func storedAPIVersion(ctx context.Context, t *testing.T, cp *framework.ControlPlane, o ref) string {
	t.Helper()
	raw, err := cp.EtcdGet(ctx, fmt.Sprintf("/registry/%s/%s/%s/%s", o.gr.Group, o.gr.Resource, o.ns, o.name))
	if err != nil {
		t.Fatal(err)
	}
	if raw == nil {
		t.Fatalf("%s is not in etcd", o)
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s in etcd: %v", o, err)
	}
	return m.APIVersion
}

func storedVersions(ctx context.Context, t *testing.T, crds apiextensionsclient.Interface, name string) []string {
	t.Helper()
	crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// installV1alpha1Only installs the shipped CRDs as the previous release
// had them: v1alpha1 the only version, and stored.
func installV1alpha1Only(ctx context.Context, t *testing.T, crds apiextensionsclient.Interface) {
	t.Helper()
	files, err := fs.Glob(manifests.CRDs, "crds/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		raw, err := fs.ReadFile(manifests.CRDs, f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
			t.Fatal(err)
		}
		var alpha []apiextensionsv1.CustomResourceDefinitionVersion
		for _, v := range crd.Spec.Versions {
			if v.Name == "v1alpha1" {
				v.Storage = true
				alpha = append(alpha, v)
			}
		}
		crd.Spec.Versions = alpha
		crd.Spec.Conversion = nil
		if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
			t.Fatalf("install %s with v1alpha1 only: %v", crd.Name, err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range crdNames {
			crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			established := false
			for _, c := range crd.Status.Conditions {
				established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
			}
			if !established {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("v1alpha1-only CRDs not established: %v", err)
	}
}

func runPlugin(ctx context.Context, t *testing.T, bin string, cp *framework.ControlPlane, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", cp.Kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl gluster %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("kubectl gluster %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}
