//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// snapshotCRDs stand in for the snapshot API an admin installs (the
// VolumeSnapshot CRDs of external-snapshotter, docs/csi.md#snapshots):
// the three resources under their real names and scopes, served at v1,
// with an open schema of the test's own. They check nothing of the
// objects; what is tested is that anthill finds the API and writes its
// class through it.
func snapshotCRDs() []*apiextensionsv1.CustomResourceDefinition {
	open := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
	}}
	crd := func(plural, kind string, scope apiextensionsv1.ResourceScope) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{
				Name: plural + "." + objects.SnapshotGroupVersion.Group,
				// A *.k8s.io group needs its API review named; the
				// add-on's CRDs name theirs.
				Annotations: map[string]string{"api-approved.kubernetes.io": "https://github.com/kubernetes-csi/external-snapshotter/pull/814"},
			},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: objects.SnapshotGroupVersion.Group, Scope: scope,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: objects.SnapshotGroupVersion.Version, Served: true, Storage: true, Schema: open,
				}},
			},
		}
	}
	return []*apiextensionsv1.CustomResourceDefinition{
		crd("volumesnapshotclasses", "VolumeSnapshotClass", apiextensionsv1.ClusterScoped),
		crd("volumesnapshotcontents", "VolumeSnapshotContent", apiextensionsv1.ClusterScoped),
		crd("volumesnapshots", "VolumeSnapshot", apiextensionsv1.NamespaceScoped),
	}
}

// TestCSISnapshots: the operator side of spec.csi.snapshots on the
// simulator. The CSI controller runs the external snapshotter beside the
// provisioner, with only flags its image has, and the controller's
// ClusterRole grants what it and a restoring provisioner need. While
// Kubernetes does not serve the snapshot API the cluster stays Ready and
// says so (a Warning Event and kubectl gluster explain, reason
// SnapshotAPIMissing) and creates no class; once the CRDs are installed
// the VolumeSnapshotClass appears, naming the driver, and deleting the
// cluster removes it. kwok runs no container, so no snapshot is taken
// here: TestCSIDriverSnapshotsOnTheSimulator drives the real driver.
func TestCSISnapshots(t *testing.T) {
	aloneWithCSI(t, "the CSI driver's name is fixed, and the snapshot CRDs are cluster-wide (docs/csi.md)")
	ctx := context.Background()
	crds, err := apiextensionsclient.NewForConfig(env.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	removeCRDs := func() {
		for _, c := range snapshotCRDs() {
			if err := crds.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete CRD %s: %v", c.Name, err)
			}
		}
		err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			for _, c := range snapshotCRDs() {
				if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, c.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, fmt.Errorf("CRD %s still there: %v", c.Name, err)
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	removeCRDs() // a run before may have left them
	t.Cleanup(removeCRDs)

	ns := newNamespace(t)
	const name = "snaps"
	file := operatorv1alpha1.GlusterDriverFile
	createClusterWith(t, ns, name, 1, func(c *operatorv1alpha1.GlusterCluster) {
		withCSI(file)(c)
		c.Spec.CSI.Snapshots = &operatorv1alpha1.CSISnapshots{Enabled: true}
	})
	waitNodes(t, ns, name, 3, 3*time.Minute)
	wait := func(t *testing.T, what string, timeout time.Duration, check func(ctx context.Context) error) {
		t.Helper()
		waitChecked(ctx, t, ns, what, timeout, check)
	}

	t.Run("the controller runs the snapshotter with flags its image has", func(t *testing.T) {
		wait(t, "the CSI controller", 2*time.Minute, func(ctx context.Context) error {
			_, err := checkDeploymentReady(ctx, ns, objects.CSIControllerName(name, file))
			return err
		})
		dep, err := env.Client.AppsV1().Deployments(ns).Get(ctx, objects.CSIControllerName(name, file), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(dep.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "csi-snapshotter" })
		if i < 0 {
			t.Fatalf("no csi-snapshotter in %s", dep.Name)
		}
		snap := dep.Spec.Template.Spec.Containers[i]
		if want := []string{"--csi-address=/csi/csi.sock", "--timeout=3m"}; !slices.Equal(snap.Args, want) {
			t.Errorf("snapshotter args %v, want %v", snap.Args, want)
		}
		for _, a := range snap.Args {
			flag, _, _ := strings.Cut(a, "=")
			if !slices.Contains(objects.SnapshotterContract.Flags, flag) {
				t.Errorf("snapshotter flag %s is not one external-snapshotter v8.2.0 has", flag)
			}
		}
		if snap.Image != objects.DefaultImages.CSISnapshotter || len(snap.VolumeMounts) != 1 || snap.VolumeMounts[0].MountPath != "/csi" {
			t.Errorf("snapshotter image %s mounts %v", snap.Image, snap.VolumeMounts)
		}
		role, err := env.Client.RbacV1().ClusterRoles().Get(ctx, objects.CSIClusterRoleName(ns, name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		granted := map[string][]string{}
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, objects.SnapshotGroupVersion.Group) {
				for _, res := range r.Resources {
					granted[res] = append(granted[res], r.Verbs...)
				}
			}
		}
		for res, verb := range map[string]string{"volumesnapshotcontents": "update", "volumesnapshotcontents/status": "patch", "volumesnapshotclasses": "watch", "volumesnapshots": "get"} {
			if !slices.Contains(granted[res], verb) {
				t.Errorf("the CSI ClusterRole does not grant %s on %s: %v", verb, res, granted)
			}
		}
	})

	classes := dyn.Resource(objects.VolumeSnapshotClassResource)
	t.Run("without the snapshot API the cluster is ready and says what to install", func(t *testing.T) {
		waitEvent(t, ns, name, states.ReasonSnapshotAPIMissing, "volumesnapshotclasses")
		waitExplain(t, ns, "glustercluster/"+name, 2*time.Minute, states.ReasonSnapshotAPIMissing, "snapshot-controller")
		out, errOut, err := runPlugin(ctx, t, ns, "status", name)
		if err != nil || !strings.Contains(out, "Snapshots: VolumeSnapshotClass "+name+"-file (driver org.gluster.glusterfs, deletionPolicy Delete)") ||
			!strings.Contains(out, "not created yet:") {
			t.Errorf("kubectl gluster status does not say the class waits for the snapshot API: %v %s\n%s", err, errOut, out)
		}
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(c.Status.Phase) != string(states.ClusterReady) {
			t.Errorf("phase %s, want Ready: snapshots missing do not degrade the volumes", c.Status.Phase)
		}
	})

	t.Run("once the snapshot API is served the class appears", func(t *testing.T) {
		for _, c := range snapshotCRDs() {
			if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, c, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		wait(t, "VolumeSnapshotClass "+name+"-file", 2*time.Minute, func(ctx context.Context) error {
			vsc, err := classes.Get(ctx, name+"-file", metav1.GetOptions{})
			if err != nil {
				return err
			}
			l := vsc.GetLabels()
			if vsc.Object["driver"] != objects.CSIFileDriverName || vsc.Object["deletionPolicy"] != "Delete" ||
				l[labelCluster] != name || l[objects.LabelClusterNamespace] != ns || l[labelManagedBy] != "anthill" {
				return fmt.Errorf("class %v", vsc.Object)
			}
			return nil
		})
	})

	t.Run("deleting the cluster removes the class", func(t *testing.T) {
		if _, err := classes.Get(ctx, name+"-file", metav1.GetOptions{}); err != nil {
			t.Fatalf("no class to see removed: %v", err)
		}
		if err := anthill.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "the class gone", 3*time.Minute, func(ctx context.Context) error {
			if _, err := classes.Get(ctx, name+"-file", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("class still there: %v", err)
			}
			return nil
		})
	})
}
