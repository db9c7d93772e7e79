//go:build e2e

package apiversions

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/manifests"
)

// refusedBlockClass is the start of the API server's message for a set
// spec.csi.storageClasses.block.
const refusedBlockClass = "spec.csi.storageClasses.block: block is not available"

// TestAStoredBlockStorageClassStillReadsAndUpdates is the upgrade from
// v0.2.0, whose CRD accepted spec.csi.storageClasses.block (it did
// nothing), to the shipped CRD, which refuses it: a cluster stored with
// the field reads back with it (the schema keeps it, so it is not pruned)
// and takes updates that leave it as it is (the API server ratchets the
// rule: it checks it only on a value that changes, and warns), while changing the
// field, or setting it on another cluster, is refused with the field
// named.
func TestAStoredBlockStorageClassStillReadsAndUpdates(t *testing.T) {
	cp, typed, _ := startControlPlane(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	crds, err := apiextensionsclient.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	shipped := shippedClusterCRD(t)
	old := shipped.DeepCopy()
	for i := range old.Spec.Versions {
		block := old.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"].Properties["csi"].Properties["storageClasses"].Properties["block"]
		if len(block.XValidations) == 0 {
			t.Fatalf("%s: the shipped schema has no rule on spec.csi.storageClasses.block", old.Spec.Versions[i].Name)
		}
		block.XValidations = nil
		old.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"].Properties["csi"].Properties["storageClasses"].Properties["block"] = block
	}
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatalf("install the CRD without the block rule: %v", err)
	}

	ns := cp.Namespace(t)
	clusters := typed.OperatorV1alpha1().GlusterClusters(ns)
	blockClass := &operatorv1alpha1.StorageClassSpec{Name: "stored-block", Create: ptr.To(false)}
	var stored *operatorv1alpha1.GlusterCluster
	// The new CRD serves after a moment: retry the create until it does.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		c := blockCluster(ns, "stored", blockClass)
		stored, err = clusters.Create(ctx, c, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("store a cluster with a block StorageClass under the old rules: %v", err)
	}

	cur, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, shipped.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shipped.ResourceVersion = cur.ResourceVersion
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, shipped, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("install the shipped CRD: %v", err)
	}
	// The shipped rules apply once a new cluster with the field is refused.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := clusters.Create(ctx, blockCluster(ns, "new", blockClass), metav1.CreateOptions{})
		switch {
		case err == nil:
			return false, clusters.Delete(ctx, "new", metav1.DeleteOptions{})
		case apierrors.IsInvalid(err) && strings.Contains(err.Error(), refusedBlockClass):
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("a new cluster with a block StorageClass is not refused under the shipped CRD: %v", err)
	}

	got, err := clusters.Get(ctx, stored.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Spec.CSI.StorageClasses.Block; b == nil || b.Name != blockClass.Name {
		t.Fatalf("the stored block StorageClass reads back as %+v, want %+v", b, blockClass)
	}
	got.Spec.Paused = true
	if got, err = clusters.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("an update that leaves the stored block StorageClass as it is was refused: %v", err)
	}
	got.Spec.CSI.StorageClasses.Block.Name = "changed-block"
	_, err = clusters.Update(ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), refusedBlockClass) {
		t.Fatalf("changing the stored block StorageClass: %v, want Invalid naming the field", err)
	}
	t.Logf("changing it: %v", err)
}

// shippedClusterCRD is manifests/crds' GlusterCluster CRD.
func shippedClusterCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	raw, err := fs.ReadFile(manifests.CRDs, "crds/operator.gluster.org_glusterclusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// blockCluster is a valid manual cluster of one server with block as its
// block StorageClass.
func blockCluster(ns, name string, block *operatorv1alpha1.StorageClassSpec) *operatorv1alpha1.GlusterCluster {
	return &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Mode:    operatorv1alpha1.ClusterModeManual,
			Gluster: &operatorv1alpha1.GlusterServerSpec{Version: "4.1.0"},
			CSI: &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{
				Block: block.DeepCopy(),
			}},
			NodeTemplates: []operatorv1alpha1.NodeTemplate{{
				Name: "zone-1", Zone: "zone-1", Nodes: ptr.To[int32](1),
				Storage: operatorv1alpha1.TemplateStorage{Capacity: resource.MustParse("10Gi")},
			}},
		},
	}
}
