//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// Annotations the PersistentVolume controller and the scheduler put on a
// claim: which provisioner must create its volume, and (delayed binding)
// the node the claim's first pod was scheduled to.
const (
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annSelectedNode       = "volume.kubernetes.io/selected-node"
)

// wantClass is what a StorageClass of the test must look like.
type wantClass struct {
	provisioner string
	reclaim     corev1.PersistentVolumeReclaimPolicy
	binding     storagev1.VolumeBindingMode
	zones       []string // allowedTopologies on the zone key; nil: none
	isDefault   bool
	params      map[string]string // the class's parameters; nil: none
}

// checkClass reads the StorageClass name and compares it with w and with
// the labels anthill puts on it.
func checkClass(ctx context.Context, ns, cluster, name string, w wantClass) (*storagev1.StorageClass, error) {
	sc, err := env.Client.StorageV1().StorageClasses().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	l := sc.Labels
	if l[labelCluster] != cluster || l[objects.LabelClusterNamespace] != ns || l[labelManagedBy] != "anthill" {
		return sc, fmt.Errorf("StorageClass %s labels %v", name, l)
	}
	if sc.Provisioner != w.provisioner {
		return sc, fmt.Errorf("StorageClass %s provisioner %q, want %q", name, sc.Provisioner, w.provisioner)
	}
	if !maps.Equal(sc.Parameters, w.params) {
		return sc, fmt.Errorf("StorageClass %s parameters %v, want %v", name, sc.Parameters, w.params)
	}
	if got := ptr.Deref(sc.ReclaimPolicy, ""); got != w.reclaim {
		return sc, fmt.Errorf("StorageClass %s reclaimPolicy %q, want %q", name, got, w.reclaim)
	}
	if got := ptr.Deref(sc.VolumeBindingMode, ""); got != w.binding {
		return sc, fmt.Errorf("StorageClass %s volumeBindingMode %q, want %q", name, got, w.binding)
	}
	if ptr.Deref(sc.AllowVolumeExpansion, true) {
		return sc, fmt.Errorf("StorageClass %s allows expansion, which no driver supports", name)
	}
	var zones []string
	for _, term := range sc.AllowedTopologies {
		for _, e := range term.MatchLabelExpressions {
			if e.Key != framework.ZoneLabel {
				return sc, fmt.Errorf("StorageClass %s allowedTopologies key %q, want %s", name, e.Key, framework.ZoneLabel)
			}
			zones = append(zones, e.Values...)
		}
	}
	if !slices.Equal(zones, w.zones) {
		return sc, fmt.Errorf("StorageClass %s allowed zones %v, want %v", name, zones, w.zones)
	}
	if got := sc.Annotations[objects.AnnotationDefaultStorageClass] == "true"; got != w.isDefault {
		return sc, fmt.Errorf("StorageClass %s is-default-class %t, want %t", name, got, w.isDefault)
	}
	return sc, nil
}

// TestStorageClasses: the provisioning path. A cluster with the file
// driver gets one StorageClass, provisioned by the name the driver
// registers (org.gluster.glusterfs). The API server accepts claims of it
// and the PersistentVolume controller hands them to that driver: at once
// without allowedZones; with them, only after the scheduler has placed
// the claim's first pod on a node of an allowed zone (the driver has no
// topology, so the scheduler alone reads the class's allowedTopologies).
// No CSI provisioner runs here, so no claim ever binds, and this test
// does not claim that one would. Then the class follows the spec: a
// deleted class comes back, a mutable change is made in place, an
// immutable one recreates the class, a rename or create: false removes the
// old class, a class of the wanted name that anthill did not make is left
// alone with a Warning Event, and deleting the cluster removes every class
// it made and nothing else.
func TestStorageClasses(t *testing.T) {
	aloneWithCSI(t, "the CSI driver's name is fixed, so one cluster at a time runs it (docs/csi.md)")
	ns := newNamespace(t)
	const name = "provision"
	ctx := context.Background()
	file := operatorv1alpha1.GlusterDriverFile
	fileClass := name + "-file"
	fileWant := wantClass{provisioner: objects.CSIDriverName(file), reclaim: corev1.PersistentVolumeReclaimDelete, binding: storagev1.VolumeBindingImmediate}
	// zonedWant is the class once it is restricted to zone-2 and keeps
	// its volumes: both changes Kubernetes does not allow in place.
	zonedWant := wantClass{provisioner: fileWant.provisioner, reclaim: corev1.PersistentVolumeReclaimRetain,
		binding: storagev1.VolumeBindingWaitForFirstConsumer, zones: []string{framework.ZoneName(2)}}
	if fileWant.provisioner != objects.CSIFileContract.DriverName {
		t.Fatalf("the file class would name provisioner %q; the driver registers %q", fileWant.provisioner, objects.CSIFileContract.DriverName)
	}
	createClusterWith(t, ns, name, 1, func(c *operatorv1alpha1.GlusterCluster) {
		withCSI(file)(c)
		c.Spec.CSI.StorageClasses = &operatorv1alpha1.CSIStorageClasses{}
	})
	sc := env.Client.StorageV1().StorageClasses()
	pvcs := env.Client.CoreV1().PersistentVolumeClaims(ns)
	wait := func(t *testing.T, what string, timeout time.Duration, check func(ctx context.Context) error) {
		t.Helper()
		waitChecked(ctx, t, ns, what, timeout, check)
	}
	uid := func(t *testing.T, class string) types.UID {
		t.Helper()
		got, err := sc.Get(ctx, class, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.UID
	}
	claim := func(n, class string, mode corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: ptr.To(class),
				AccessModes:      []corev1.PersistentVolumeAccessMode{mode},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
	}

	t.Run("one StorageClass, provisioned by the name the driver registers", func(t *testing.T) {
		wait(t, "StorageClass", 3*time.Minute, func(ctx context.Context) error {
			_, err := checkClass(ctx, ns, name, fileClass, fileWant)
			return err
		})
		// The provisioner of the class is the CSIDriver the operator deployed.
		if err := checkCSIDriver(ctx, ns, name, file); err != nil {
			t.Fatal(err)
		}
		// No block class: the API refuses block.
		if _, err := sc.Get(ctx, name+"-block", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("StorageClass %s-block: %v, want none", name, err)
		}
	})

	t.Run("a claim of the class is accepted and handed to the file driver at once; it does not bind without a provisioner", func(t *testing.T) {
		if _, err := pvcs.Create(ctx, claim("shared-data", fileClass, corev1.ReadWriteMany), metav1.CreateOptions{}); err != nil {
			t.Fatalf("a claim of the file class was refused: %v", err)
		}
		wait(t, "the file claim handed to the file driver at once", time.Minute, func(ctx context.Context) error {
			c, err := pvcs.Get(ctx, "shared-data", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := c.Annotations[annStorageProvisioner]; got != fileWant.provisioner {
				return fmt.Errorf("claim shared-data: provisioner annotation %q, want %q", got, fileWant.provisioner)
			}
			if c.Status.Phase != corev1.ClaimPending {
				return fmt.Errorf("claim shared-data is %s without a provisioner", c.Status.Phase)
			}
			return nil
		})
	})

	t.Run("a deleted StorageClass is recreated", func(t *testing.T) {
		old := uid(t, fileClass)
		if err := sc.Delete(ctx, fileClass, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "file class recreated", 2*time.Minute, func(ctx context.Context) error {
			got, err := checkClass(ctx, ns, name, fileClass, fileWant)
			if err != nil {
				return err
			}
			if got.UID == old {
				return fmt.Errorf("StorageClass %s not yet deleted", fileClass)
			}
			return nil
		})
	})

	t.Run("isDefault is set and cleared in place", func(t *testing.T) {
		before := uid(t, fileClass)
		setFile := func(s *operatorv1alpha1.StorageClassSpec) {
			editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.CSI.StorageClasses.File = s })
		}
		setFile(&operatorv1alpha1.StorageClassSpec{IsDefault: true})
		w := fileWant
		w.isDefault = true
		wait(t, "file class marked default", time.Minute, func(ctx context.Context) error {
			_, err := checkClass(ctx, ns, name, fileClass, w)
			return err
		})
		setFile(nil)
		wait(t, "file class no longer default", time.Minute, func(ctx context.Context) error {
			_, err := checkClass(ctx, ns, name, fileClass, fileWant)
			return err
		})
		if after := uid(t, fileClass); after != before {
			t.Fatalf("StorageClass %s was recreated (uid %s -> %s) for a change Kubernetes allows in place", fileClass, before, after)
		}
	})

	t.Run("a change to a field Kubernetes keeps immutable recreates the class; claims stay", func(t *testing.T) {
		before := uid(t, fileClass)
		editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.CSI.StorageClasses.File = &operatorv1alpha1.StorageClassSpec{
				ReclaimPolicy: corev1.PersistentVolumeReclaimRetain, AllowedZones: []string{framework.ZoneName(2)},
			}
		})
		wait(t, "file class recreated with reclaimPolicy Retain, bound to zone-2", time.Minute, func(ctx context.Context) error {
			got, err := checkClass(ctx, ns, name, fileClass, zonedWant)
			if err != nil {
				return err
			}
			if got.UID == before {
				return fmt.Errorf("StorageClass %s still the old object", fileClass)
			}
			return nil
		})
		if _, err := pvcs.Get(ctx, "shared-data", metav1.GetOptions{}); err != nil {
			t.Fatalf("the claim of the recreated class: %v", err)
		}
	})

	t.Run("a delayed-binding claim is placed in the allowed zone, then handed to the file driver", func(t *testing.T) {
		if _, err := pvcs.Create(ctx, claim("db-data", fileClass, corev1.ReadWriteOnce), metav1.CreateOptions{}); err != nil {
			t.Fatalf("a claim of the zoned class was refused: %v", err)
		}
		// A pod for the delayed-binding claim; the scheduler must pick a
		// node in the class's allowed zone before provisioning can start.
		// The pod prefers zone-1, so only the class's topology can put it
		// in zone-2.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
			Spec: corev1.PodSpec{
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 100,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: framework.ZoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{framework.ZoneName(1)}},
					}},
				}}}},
				Containers: []corev1.Container{{Name: "db", Image: "registry.invalid/db:1", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db-data"},
				}}},
			},
		}
		if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "the delayed claim placed in the allowed zone, then handed to the file driver", 2*time.Minute, func(ctx context.Context) error {
			c, err := pvcs.Get(ctx, "db-data", metav1.GetOptions{})
			if err != nil {
				return err
			}
			node := c.Annotations[annSelectedNode]
			if node == "" {
				return fmt.Errorf("claim db-data: no node selected yet")
			}
			n, err := env.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if z := n.Labels[framework.ZoneLabel]; z != framework.ZoneName(2) {
				t.Fatalf("the scheduler selected node %s in zone %s for claim db-data, outside the class's allowed zone %s", node, z, framework.ZoneName(2))
			}
			if got := c.Annotations[annStorageProvisioner]; got != zonedWant.provisioner {
				return fmt.Errorf("claim db-data: provisioner annotation %q, want %q", got, zonedWant.provisioner)
			}
			if c.Status.Phase != corev1.ClaimPending {
				return fmt.Errorf("claim db-data is %s without a provisioner", c.Status.Phase)
			}
			return nil
		})
	})

	// An admin's class under a name the cluster will want.
	const taken = "provision-taken"
	admins := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: taken}, Provisioner: "example.com/other"}
	if _, err := sc.Create(ctx, admins, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Delete(context.Background(), taken, metav1.DeleteOptions{}) })

	t.Run("a rename removes the old class; a taken name is left alone", func(t *testing.T) {
		editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.CSI.StorageClasses.File.Name = taken })
		wait(t, "old class deleted, the clash reported", 2*time.Minute, func(ctx context.Context) error {
			if _, err := sc.Get(ctx, fileClass, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("StorageClass %s: %v, want it deleted", fileClass, err)
			}
			ev, err := env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
			if err != nil {
				return err
			}
			for _, e := range ev.Items {
				if e.Reason == "StorageClassNameTaken" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, taken) {
					return nil
				}
			}
			return fmt.Errorf("no StorageClassNameTaken Warning Event naming %s", taken)
		})
		got, err := sc.Get(ctx, taken, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Provisioner != admins.Provisioner || len(got.Labels) != 0 {
			t.Fatalf("the admin's StorageClass %s was changed: provisioner %q, labels %v", taken, got.Provisioner, got.Labels)
		}
		// Back to an own name: the class is created.
		editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.CSI.StorageClasses.File.Name = "" })
		wait(t, "file class back", time.Minute, func(ctx context.Context) error {
			_, err := checkClass(ctx, ns, name, fileClass, zonedWant)
			return err
		})
	})

	t.Run("create: false removes the class; true brings it back", func(t *testing.T) {
		editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.CSI.StorageClasses.File.Create = ptr.To(false) })
		wait(t, "file class deleted", time.Minute, func(ctx context.Context) error {
			if _, err := sc.Get(ctx, fileClass, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("StorageClass %s: %v, want it deleted", fileClass, err)
			}
			return nil
		})
		editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.CSI.StorageClasses.File.Create = nil })
		wait(t, "file class back", time.Minute, func(ctx context.Context) error {
			_, err := checkClass(ctx, ns, name, fileClass, zonedWant)
			return err
		})
	})

	t.Run("deleting the cluster removes its StorageClasses and no other", func(t *testing.T) {
		if err := anthill.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "cluster teardown", 4*time.Minute, func(ctx context.Context) error {
			// The claims are not provisioned, so no PersistentVolume holds
			// the deletion; the claims themselves are the user's.
			left, err := leftovers(ctx, ns, name, nil)
			if err != nil {
				return err
			}
			if len(left) > 0 {
				return fmt.Errorf("left: %s", strings.Join(left, "; "))
			}
			return nil
		})
		all, err := sc.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, c := range all.Items {
			names[c.Name] = true
		}
		if !names[taken] {
			t.Fatalf("the admin's StorageClass %s was deleted with the cluster (left: %v)", taken, slices.Sorted(maps.Keys(names)))
		}
		if names[fileClass] {
			t.Fatalf("StorageClass %s outlived its cluster", fileClass)
		}
		for _, c := range []string{"shared-data", "db-data"} {
			if _, err := pvcs.Get(ctx, c, metav1.GetOptions{}); err != nil {
				t.Fatalf("a user's claim was deleted with the cluster: %v", err)
			}
		}
	})
}

// docExample is the first yaml block of section heading in docs/csi.md,
// as an admin copies it from the page.
func docExample(t *testing.T, heading string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "csi.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/csi.md has no section %q", heading)
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatalf("docs/csi.md, %s: no yaml block", heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return []byte(block)
}

// TestStorageClassesPerVolumeType: the example of docs/csi.md, "Classes
// per volume type", applied to a running cluster as the page says (a
// merge patch), gives a replica-3 class, the default, and a replica-2
// class with a thin arbiter, each with exactly those parameters, beside
// the file class, which keeps none; kubectl gluster status lists the three.
// A class asking for four copies is refused, naming the field, and leaves
// the classes as they were; removing the list removes the two classes.
// No driver runs here (kwok runs no containers), so no claim is
// provisioned: what the driver does with the parameters is its source's
// word (docs/csi.md).
func TestStorageClassesPerVolumeType(t *testing.T) {
	aloneWithCSI(t, "the CSI driver's name is fixed, so one cluster at a time runs it (docs/csi.md)")
	ns := newNamespace(t)
	const name = "classes"
	ctx := context.Background()
	createClusterWith(t, ns, name, 1, withCSI(operatorv1alpha1.GlusterDriverFile))
	provisioner := objects.CSIDriverName(operatorv1alpha1.GlusterDriverFile)
	deleteNow := wantClass{provisioner: provisioner, reclaim: corev1.PersistentVolumeReclaimDelete, binding: storagev1.VolumeBindingImmediate}
	file, replica3, thin := deleteNow, deleteNow, deleteNow
	replica3.isDefault, replica3.params = true, map[string]string{"replicas": "3"}
	thin.params = map[string]string{"replicas": "2", "arbiterType": "thin", "arbiterPath": "arbiter.example.com:/bricks/thin-arbiter:24007"}
	classes := func(want map[string]wantClass, gone ...string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			for n, w := range want {
				if _, err := checkClass(ctx, ns, name, n, w); err != nil {
					return err
				}
			}
			for _, n := range gone {
				if _, err := env.Client.StorageV1().StorageClasses().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("StorageClass %s: %v, want it deleted", n, err)
				}
			}
			return nil
		}
	}
	waitChecked(ctx, t, ns, "the file class", 3*time.Minute, classes(map[string]wantClass{name + "-file": file}))

	patch, err := yaml.YAMLToJSON(docExample(t, "### Classes per volume type"))
	if err != nil {
		t.Fatalf("the example of docs/csi.md is not YAML: %v", err)
	}
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("the example of docs/csi.md was refused: %v", err)
	}
	all := map[string]wantClass{name + "-file": file, "gluster-replica3": replica3, "gluster-thin-arbiter": thin}
	waitChecked(ctx, t, ns, "a class per volume type, with its parameters", 2*time.Minute, classes(all))

	out, errOut, err := runPlugin(ctx, t, ns, "status", name)
	if err != nil {
		t.Fatalf("kubectl gluster status: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{
		"StorageClasses:",
		name + "-file  ",
		"gluster-replica3  ",
		"replicas=3  ",
		"gluster-thin-arbiter  ",
		"replicas=2 arbiterType=thin arbiterPath=arbiter.example.com:/bricks/thin-arbiter:24007  ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl gluster status does not show %q:\n%s", want, out)
		}
	}

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c.Spec.CSI.StorageClasses.Additional[1].ArbiterType, c.Spec.CSI.StorageClasses.Additional[1].ArbiterPath = "", ""
		c.Spec.CSI.StorageClasses.Additional[1].Replicas = ptr.To[int32](4)
		_, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
	const field = "spec.csi.storageClasses.additional[1].replicas"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field) {
		t.Fatalf("a class of four copies: %v, want it refused naming %s", err, field)
	}
	t.Logf("a class of four copies is refused: %v", err)
	if err := classes(all)(ctx); err != nil {
		t.Fatalf("after the refused change: %v", err)
	}

	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.CSI.StorageClasses.Additional = nil })
	waitChecked(ctx, t, ns, "the additional classes removed", 2*time.Minute,
		classes(map[string]wantClass{name + "-file": file}, "gluster-replica3", "gluster-thin-arbiter"))
}

// runPlugin runs kubectl gluster args against the test's control plane
// in namespace ns.
func runPlugin(ctx context.Context, t *testing.T, ns string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, framework.KubectlGlusterBinary.For(t), append(args, "--kubeconfig", env.Kubeconfig, "-n", ns)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}
