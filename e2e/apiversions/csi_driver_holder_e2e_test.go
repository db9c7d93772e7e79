//go:build e2e

package apiversions

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/manifests"
)

// TestASecondClusterAskingForTheCSIDriverIsRefused installs the shipped
// admission policy (manifests/admission) and the shipped samples: while
// one GlusterCluster holds the fixed-name CSI driver (its CSIDriver, as
// the operator builds it), another that asks for the driver, managed or
// external, is refused with the field, the holder and the way out; the
// same cluster with spec.csi.enabled false is admitted and cannot turn it
// on; the holder still updates; once the holder and its CSIDriver are
// gone, a cluster asking for the driver is admitted. Turning the driver
// off is refused by the CRD's own rule.
func TestASecondClusterAskingForTheCSIDriverIsRefused(t *testing.T) {
	cp, typed, _ := startControlPlane(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	kube, err := kubernetes.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	installAdmissionPolicy(ctx, t, kube)

	nsFirst, nsSecond := cp.Namespace(t), cp.Namespace(t)
	first := sampleCluster(t, "glustercluster.yaml", nsFirst, "first")
	first, err = typed.OperatorV1alpha1().GlusterClusters(nsFirst).Create(ctx, first, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the first cluster, with no CSI driver deployed yet, was refused: %v", err)
	}
	// What the operator's EnsureCSIDrivers creates for the first cluster.
	driver := objects.CSIDriverObject(first, operatorv1alpha1.GlusterDriverFile)
	if _, err := kube.StorageV1().CSIDrivers().Create(ctx, driver, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	second := sampleCluster(t, "glustercluster.yaml", nsSecond, "second")
	refusal := waitAdmission(ctx, t, typed, second, true)
	t.Logf("refused: %s", refusal)
	for _, want := range []string{
		"spec.csi.enabled",
		"org.gluster.glusterfs is held by GlusterCluster " + nsFirst + "/first",
		"Set spec.csi.enabled: false",
	} {
		if !strings.Contains(refusal, want) {
			t.Errorf("refusal %q does not say %q", refusal, want)
		}
	}
	if _, err := typed.OperatorV1alpha1().GlusterClusters(nsSecond).Create(ctx, second, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "held by GlusterCluster "+nsFirst+"/first") {
		t.Fatalf("a second cluster asking for the driver: got %v, want the refusal naming the holder", err)
	}
	external := sampleCluster(t, "glustercluster-external.yaml", nsSecond, "external")
	if _, err := typed.OperatorV1alpha1().GlusterClusters(nsSecond).Create(ctx, external, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "held by GlusterCluster "+nsFirst+"/first") {
		t.Fatalf("an external cluster asking for the driver: got %v, want the refusal naming the holder", err)
	}

	t.Run("with the driver off the second cluster is admitted, and cannot turn it on", func(t *testing.T) {
		off := second.DeepCopy()
		off.Name = "second-without-csi"
		off.Spec.CSI = &operatorv1alpha1.CSISpec{Enabled: ptr.To(false)}
		got, err := typed.OperatorV1alpha1().GlusterClusters(nsSecond).Create(ctx, off, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("the second cluster with spec.csi.enabled false was refused: %v", err)
		}
		got.Spec.CSI.Enabled = ptr.To(true)
		if _, err := typed.OperatorV1alpha1().GlusterClusters(nsSecond).Update(ctx, got, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "held by GlusterCluster "+nsFirst+"/first") {
			t.Fatalf("turning the driver on while another cluster holds it: got %v, want the refusal", err)
		}
	})

	t.Run("the holder still updates, and cannot turn its driver off", func(t *testing.T) {
		cur, err := typed.OperatorV1alpha1().GlusterClusters(nsFirst).Get(ctx, "first", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Labels = map[string]string{"team": "storage"}
		if cur, err = typed.OperatorV1alpha1().GlusterClusters(nsFirst).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("the holder's update was refused: %v", err)
		}
		cur.Spec.CSI = &operatorv1alpha1.CSISpec{Enabled: ptr.To(false)}
		if _, err := typed.OperatorV1alpha1().GlusterClusters(nsFirst).Update(ctx, cur, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.csi.enabled cannot be turned off") {
			t.Fatalf("turning the holder's driver off: got %v, want the refusal", err)
		}
	})

	t.Run("once the holder is deleted, a cluster asking for the driver is admitted", func(t *testing.T) {
		if err := typed.OperatorV1alpha1().GlusterClusters(nsFirst).Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// What the operator's deleteCSI does as the cluster goes.
		if err := kube.StorageV1().CSIDrivers().Delete(ctx, driver.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAdmission(ctx, t, typed, second, false)
		if _, err := typed.OperatorV1alpha1().GlusterClusters(nsSecond).Create(ctx, second, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a second cluster asking for the free driver was refused: %v", err)
		}
	})
}

// installAdmissionPolicy creates the shipped ValidatingAdmissionPolicy and
// its binding.
func installAdmissionPolicy(ctx context.Context, t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	raw, err := fs.ReadFile(manifests.Admission, "admission/csi_driver_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(raw, []byte("\n---\n"))
	if len(docs) != 2 {
		t.Fatalf("manifests/admission/csi_driver_policy.yaml has %d documents, want the policy and its binding", len(docs))
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict(docs[0], policy); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(docs[1], binding); err != nil {
		t.Fatal(err)
	}
	reg := kube.AdmissionregistrationV1()
	if _, err := reg.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("install the policy: %v", err)
	}
	if _, err := reg.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("install the binding: %v", err)
	}
	// The API server compiles the policy and reports what fails to.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := reg.ValidatingAdmissionPolicies().Get(ctx, policy.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.TypeChecking == nil || p.Status.ObservedGeneration != p.Generation {
			return false, nil
		}
		if w := p.Status.TypeChecking.ExpressionWarnings; len(w) > 0 {
			return false, fmt.Errorf("the policy does not type-check: %+v", w)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("policy %s: %v", policy.Name, err)
	}
}

// waitAdmission dry-runs the create of c until admission refuses it
// (refused) or admits it, returning the refusal: the API server applies a
// new policy, and a changed parameter, a moment after they are written.
func waitAdmission(ctx context.Context, t *testing.T, typed versioned.Interface, c *operatorv1alpha1.GlusterCluster, refused bool) string {
	t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := typed.OperatorV1alpha1().GlusterClusters(c.Namespace).Create(ctx, c.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			msg = err.Error()
		}
		return (err != nil) == refused, nil
	})
	if err != nil {
		t.Fatalf("dry-run create of %s/%s: want refused=%v, last answer %q: %v", c.Namespace, c.Name, refused, msg, err)
	}
	return msg
}

// sampleCluster is the shipped sample file as namespace/name.
func sampleCluster(t *testing.T, file, namespace, name string) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	raw, err := fs.ReadFile(manifests.Samples, "samples/"+file)
	if err != nil {
		t.Fatal(err)
	}
	c := &operatorv1alpha1.GlusterCluster{}
	if err := yaml.Unmarshal(raw, c); err != nil {
		t.Fatal(err)
	}
	c.Namespace, c.Name = namespace, name
	return c
}
