//go:build e2e

package apiversions

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
)

const testTimeout = 3 * time.Minute

var (
	clustersGR = schema.GroupResource{Group: operatorv1alpha1.GroupName, Resource: operatorv1alpha1.GlusterClusterResource}
	nodesGR    = schema.GroupResource{Group: operatorv1alpha1.GroupName, Resource: operatorv1alpha1.GlusterNodeResource}
)

func at(gr schema.GroupResource, version string) schema.GroupVersionResource {
	return gr.WithVersion(version)
}

// startControlPlane starts a control plane of the test's own (no fake
// nodes), with anthill's CRDs when installCRDs.
func startControlPlane(t *testing.T, installCRDs bool) (*framework.ControlPlane, versioned.Interface, dynamic.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := framework.Start(ctx, framework.Options{InstallCRDs: installCRDs, Log: os.Stderr})
	if err != nil {
		t.Fatalf("control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	typed, err := versioned.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	return cp, typed, dyn
}

// toUnstructured is obj as JSON values with the given apiVersion and kind.
func toUnstructured(t *testing.T, obj any, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func fromUnstructured[T any](t *testing.T, u *unstructured.Unstructured) T {
	t.Helper()
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		t.Fatalf("decode %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// sameButVersion fails unless a and b, one object read through two
// versions, are equal in everything but apiVersion.
func sameButVersion(t *testing.T, a, b *unstructured.Unstructured) {
	t.Helper()
	ca, cb := a.DeepCopy(), b.DeepCopy()
	ca.SetAPIVersion("")
	cb.SetAPIVersion("")
	if !apiequality.Semantic.DeepEqual(ca.Object, cb.Object) {
		ja, _ := json.MarshalIndent(ca.Object, "", " ")
		jb, _ := json.MarshalIndent(cb.Object, "", " ")
		t.Errorf("%s %s differs between versions:\n%s\n---\n%s", a.GetKind(), a.GetName(), ja, jb)
	}
}

// TestEveryFieldReadsTheSameInBothVersions writes fully populated
// GlusterClusters and GlusterNodes through one version and reads them
// through the other, both ways: spec and status come back equal to what
// was written, field for field, and the two versions' readings are equal
// but for apiVersion.
func TestEveryFieldReadsTheSameInBothVersions(t *testing.T) {
	clusters, nodes := fullClusters(), fullNodes()
	requireEveryField(t, clusters, clusterUnsettable)
	requireEveryField(t, nodes, nodeUnsettable)
	cp, typed, dyn := startControlPlane(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	t.Run("written as v1alpha1, read as v1beta1", func(t *testing.T) {
		ns := cp.Namespace(t)
		for _, want := range clusters {
			want.Namespace = ns
			created, err := typed.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, &want, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create GlusterCluster %s: %v", want.Name, err)
			}
			created.Status = want.Status
			if _, err := typed.OperatorV1alpha1().GlusterClusters(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("status of GlusterCluster %s: %v", want.Name, err)
			}
			checkCluster(ctx, t, dyn, &want)
		}
		for _, want := range nodes {
			want.Namespace = ns
			created, err := typed.OperatorV1alpha1().GlusterNodes(ns).Create(ctx, &want, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create GlusterNode %s: %v", want.Name, err)
			}
			created.Status = want.Status
			if _, err := typed.OperatorV1alpha1().GlusterNodes(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("status of GlusterNode %s: %v", want.Name, err)
			}
			checkNode(ctx, t, dyn, &want)
		}
	})

	t.Run("written as v1beta1, read as v1alpha1", func(t *testing.T) {
		ns := cp.Namespace(t)
		for _, want := range clusters {
			want.Namespace = ns
			writeV1beta1(ctx, t, dyn, clustersGR, toUnstructured(t, &want, "operator.gluster.org/v1beta1", "GlusterCluster"))
			got, err := typed.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			equalSpecStatus(t, "GlusterCluster "+want.Name, want.Spec, got.Spec, want.Status, got.Status)
			checkCluster(ctx, t, dyn, &want)
		}
		for _, want := range nodes {
			want.Namespace = ns
			writeV1beta1(ctx, t, dyn, nodesGR, toUnstructured(t, &want, "operator.gluster.org/v1beta1", "GlusterNode"))
			got, err := typed.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			equalSpecStatus(t, "GlusterNode "+want.Name, want.Spec, got.Spec, want.Status, got.Status)
			checkNode(ctx, t, dyn, &want)
		}
	})
}

// writeV1beta1 creates u through v1beta1 and then writes its status there.
func writeV1beta1(ctx context.Context, t *testing.T, dyn dynamic.Interface, gr schema.GroupResource, u *unstructured.Unstructured) {
	t.Helper()
	client := dyn.Resource(at(gr, "v1beta1")).Namespace(u.GetNamespace())
	status := u.Object["status"]
	created, err := client.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s as v1beta1: %v", u.GetKind(), u.GetName(), err)
	}
	created.Object["status"] = status
	if _, err := client.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("status of %s %s as v1beta1: %v", u.GetKind(), u.GetName(), err)
	}
}

// checkBothVersions reads one object through v1alpha1 and v1beta1, fails
// unless the readings are equal apart from apiVersion, and returns the
// v1beta1 one.
func checkBothVersions(ctx context.Context, t *testing.T, dyn dynamic.Interface, gr schema.GroupResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	alpha, err := dyn.Resource(at(gr, "v1alpha1")).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	beta, err := dyn.Resource(at(gr, "v1beta1")).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if alpha.GetAPIVersion() != "operator.gluster.org/v1alpha1" || beta.GetAPIVersion() != "operator.gluster.org/v1beta1" {
		t.Errorf("%s: read as %s and %s", name, alpha.GetAPIVersion(), beta.GetAPIVersion())
	}
	sameButVersion(t, alpha, beta)
	return beta
}

func checkCluster(ctx context.Context, t *testing.T, dyn dynamic.Interface, want *operatorv1alpha1.GlusterCluster) {
	t.Helper()
	got := fromUnstructured[operatorv1alpha1.GlusterCluster](t, checkBothVersions(ctx, t, dyn, clustersGR, want.Namespace, want.Name))
	equalSpecStatus(t, "GlusterCluster "+want.Name+" as v1beta1", want.Spec, got.Spec, want.Status, got.Status)
}

func checkNode(ctx context.Context, t *testing.T, dyn dynamic.Interface, want *operatorv1alpha1.GlusterNode) {
	t.Helper()
	got := fromUnstructured[operatorv1alpha1.GlusterNode](t, checkBothVersions(ctx, t, dyn, nodesGR, want.Namespace, want.Name))
	equalSpecStatus(t, "GlusterNode "+want.Name+" as v1beta1", want.Spec, got.Spec, want.Status, got.Status)
}

func equalSpecStatus(t *testing.T, what string, wantSpec, gotSpec, wantStatus, gotStatus any) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(wantSpec, gotSpec) {
		t.Errorf("%s: spec differs from what was written:\nwant %s\n got %s", what, mustJSON(wantSpec), mustJSON(gotSpec))
	}
	if !apiequality.Semantic.DeepEqual(wantStatus, gotStatus) {
		t.Errorf("%s: status differs from what was written:\nwant %s\n got %s", what, mustJSON(wantStatus), mustJSON(gotStatus))
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
