//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// createClusterWith is createCluster with a change to the spec before it
// is created.
func createClusterWith(t *testing.T, ns, name string, perTemplate int32, mutate func(*operatorv1alpha1.GlusterCluster)) {
	t.Helper()
	ctx := context.Background()
	startSim(t, ns, defaultSimOptions)
	if err := env.CreateSimAuthSecret(ctx, ns, name, simOf(t)); err != nil {
		t.Fatal(err)
	}
	c, err := framework.SampleCluster(ns, name, simOf(t), perTemplate)
	if err != nil {
		t.Fatal(err)
	}
	mutate(c)
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// withCSI sets spec.csi (version 4.1.0, the sample's server version) and
// spec.drivers.
func withCSI(drivers ...operatorv1alpha1.GlusterDriver) func(*operatorv1alpha1.GlusterCluster) {
	return func(c *operatorv1alpha1.GlusterCluster) {
		c.Spec.CSI = &operatorv1alpha1.CSISpec{FileImage: "quay.io/example/gluster-csi-file", Version: "4.1.0"}
		c.Spec.Drivers = drivers
	}
}

// kwokNodes are the fake Kubernetes nodes with the labels of selector (all
// of them for an empty one), by name.
func kwokNodes(ctx context.Context, selector map[string]string) (map[string]bool, error) {
	l, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range l.Items {
		out[n.Name] = true
	}
	return out, nil
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// checkNodePlugin checks that the DaemonSet exists with OnDelete, the
// version annotation and the cluster's labels, and that one Ready pod of
// it runs on every Kubernetes node its node selector picks, and none
// elsewhere.
func checkNodePlugin(ctx context.Context, ns, cluster, name, version string) error {
	ds, err := env.Client.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		return fmt.Errorf("DaemonSet %s uses %s, want OnDelete", name, ds.Spec.UpdateStrategy.Type)
	}
	if got := ds.Spec.Template.Annotations[objects.AnnotationVersion]; got != version {
		return fmt.Errorf("DaemonSet %s is at version %q, want %q", name, got, version)
	}
	l := ds.Labels
	if l[labelCluster] != cluster || l[labelManagedBy] != "anthill" || l[objects.LabelComponent] != objects.ComponentCSINode {
		return fmt.Errorf("DaemonSet %s labels %v", name, l)
	}
	nodes, err := kwokNodes(ctx, ds.Spec.Template.Spec.NodeSelector)
	if err != nil {
		return err
	}
	pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(ds.Spec.Selector)})
	if err != nil {
		return err
	}
	ready := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			return fmt.Errorf("DaemonSet %s has pod %s on node %s, which its node selector %v does not pick", name, p.Name, p.Spec.NodeName, ds.Spec.Template.Spec.NodeSelector)
		}
		if podIsReady(p) && p.Annotations[objects.AnnotationVersion] == version {
			ready[p.Spec.NodeName] = true
		}
	}
	for n := range nodes {
		if !ready[n] {
			return fmt.Errorf("DaemonSet %s: no Ready pod at %s on node %s (%d of %d nodes ready)", name, version, n, len(ready), len(nodes))
		}
	}
	return nil
}

// checkDeploymentReady checks that the Deployment has its one replica
// available.
func checkDeploymentReady(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
	d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if d.Status.AvailableReplicas < 1 {
		return d, fmt.Errorf("Deployment %s has %d available replicas", name, d.Status.AvailableReplicas)
	}
	return d, nil
}

// checkCSIDriver checks the CSIDriver exists with the cluster's labels,
// its namespace among them.
func checkCSIDriver(ctx context.Context, ns, cluster string, kind operatorv1alpha1.GlusterDriver) error {
	name := objects.CSIDriverName(kind)
	d, err := env.Client.StorageV1().CSIDrivers().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	l := d.Labels
	if l[labelCluster] != cluster || l[objects.LabelClusterNamespace] != ns || l[labelManagedBy] != "anthill" {
		return fmt.Errorf("CSIDriver %s labels %v", name, l)
	}
	return nil
}

// TestCSINodePluginsFollowTheNodeSelector creates a cluster whose
// spec.csi.nodeSelector picks one zone's Kubernetes nodes: the file node
// plugin runs there, on every such node, and nowhere else.
func TestCSINodePluginsFollowTheNodeSelector(t *testing.T) {
	aloneWithCSI(t, "the CSI driver's name is fixed, so one cluster at a time runs it (docs/csi.md)")
	ns := newNamespace(t)
	const name = "csisel"
	sel := map[string]string{objects.ZoneLabel: framework.ZoneName(2)}
	createClusterWith(t, ns, name, 1, func(c *operatorv1alpha1.GlusterCluster) {
		withCSI(operatorv1alpha1.GlusterDriverFile)(c)
		c.Spec.CSI.NodeSelector = sel
	})
	ctx := context.Background()
	picked, err := kwokNodes(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	all, err := kwokNodes(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(picked) == 0 || len(picked) == len(all) {
		t.Fatalf("the selector %v picks %d of %d Kubernetes nodes: the test needs some, not all", sel, len(picked), len(all))
	}
	ds := objects.CSINodeDaemonSetName(name)
	waitChecked(ctx, t, ns, "node plugin on the selected nodes only", 2*time.Minute, func(ctx context.Context) error {
		d, err := env.Client.AppsV1().DaemonSets(ns).Get(ctx, ds, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !maps.Equal(d.Spec.Template.Spec.NodeSelector, sel) {
			return fmt.Errorf("DaemonSet %s has node selector %v, want %v", ds, d.Spec.Template.Spec.NodeSelector, sel)
		}
		return checkNodePlugin(ctx, ns, name, ds, "4.1.0")
	})
}

// TestCSIDrivers deploys a cluster with the file driver, under the name
// the driver registers, with the flags it has; shows that the API refuses
// block; and that the operator recreates a missing object.
func TestCSIDrivers(t *testing.T) {
	aloneWithCSI(t, "the CSI driver's name is fixed, so one cluster at a time runs it (docs/csi.md)")
	ns := newNamespace(t)
	const name = "csi"
	ctx := context.Background()
	file, block := operatorv1alpha1.GlusterDriverFile, operatorv1alpha1.GlusterDriverBlock
	createClusterWith(t, ns, name, 1, withCSI(file))
	waitNodes(t, ns, name, 3, 3*time.Minute)

	wait := func(t *testing.T, what string, timeout time.Duration, check func(ctx context.Context) error) {
		t.Helper()
		waitChecked(ctx, t, ns, what, timeout, check)
	}

	t.Run("the file driver is deployed", func(t *testing.T) {
		wait(t, "file driver", 2*time.Minute, func(ctx context.Context) error {
			if _, err := checkDeploymentReady(ctx, ns, objects.CSIControllerName(name, file)); err != nil {
				return err
			}
			if err := checkCSIDriver(ctx, ns, name, file); err != nil {
				return err
			}
			for _, sa := range []string{objects.CSIControllerServiceAccountName(name), objects.CSINodeServiceAccountName(name)} {
				if _, err := env.Client.CoreV1().ServiceAccounts(ns).Get(ctx, sa, metav1.GetOptions{}); err != nil {
					return err
				}
			}
			rn := objects.CSIClusterRoleName(ns, name)
			if _, err := env.Client.RbacV1().ClusterRoles().Get(ctx, rn, metav1.GetOptions{}); err != nil {
				return err
			}
			if _, err := env.Client.RbacV1().ClusterRoleBindings().Get(ctx, rn, metav1.GetOptions{}); err != nil {
				return err
			}
			return checkNodePlugin(ctx, ns, name, objects.CSINodeDaemonSetName(name), "4.1.0")
		})
		// Only what the spec asks for: no block driver yet.
		if _, err := env.Client.AppsV1().DaemonSets(ns).Get(ctx, objects.CSINodeDaemonSetNameOf(name, block), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("block node plugin exists without block in spec.drivers: %v", err)
		}
	})

	t.Run("the StorageClass names the provisioner the driver registers, with parameters it reads", func(t *testing.T) {
		sc, err := env.Client.StorageV1().StorageClasses().Get(ctx, objects.StorageClassName(&operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, file), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Provisioner != objects.CSIFileContract.DriverName {
			t.Errorf("StorageClass %s names provisioner %q; the driver registers %q", sc.Name, sc.Provisioner, objects.CSIFileContract.DriverName)
		}
		for k := range sc.Parameters {
			if !slices.Contains(objects.CSIFileParameters, k) {
				t.Errorf("StorageClass %s sets parameter %q, which the driver does not read", sc.Name, k)
			}
		}
		// The provisioner answers claims of the name the driver gives it
		// (GetPluginInfo); the driver is started with flags it has, and
		// kubelet finds its socket under the same name.
		dep, err := env.Client.AppsV1().Deployments(ns).Get(ctx, objects.CSIControllerName(name, file), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := env.Client.AppsV1().DaemonSets(ns).Get(ctx, objects.CSINodeDaemonSetName(name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range []corev1.PodSpec{dep.Spec.Template.Spec, ds.Spec.Template.Spec} {
			for _, c := range spec.Containers {
				for _, a := range c.Args {
					flag, _, _ := strings.Cut(a, "=")
					k := objects.ContractOf(c.Name, false)
					if k != nil && !slices.Contains(k.Flags, flag) {
						t.Errorf("container %s: flag %s is not one %s has", c.Name, flag, k.Component)
					}
				}
				if c.Name == "node-driver-registrar" && !slices.Contains(c.Args, "--kubelet-registration-path=/var/lib/kubelet/plugins/"+sc.Provisioner+"/csi.sock") {
					t.Errorf("registrar %q: kubelet would not find the driver under %s", c.Args, sc.Provisioner)
				}
			}
		}
	})

	t.Run("a claim of the StorageClass goes down the controller path to the driver, with parameters it reads", func(t *testing.T) {
		// As far as this machine goes: kwok runs no container, so the
		// claim reaches the provisioner's door and stops there. Each hop
		// up to it is checked against what the real images do.
		class := objects.StorageClassName(&operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, file)
		sc, err := env.Client.StorageV1().StorageClasses().Get(ctx, class, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The PersistentVolume controller hands the claim to the
		// StorageClass's provisioner name...
		pvcs := env.Client.CoreV1().PersistentVolumeClaims(ns)
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: ptr.To(class),
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := pvcs.Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a claim of %s was refused: %v", class, err)
		}
		wait(t, "the claim handed to the driver's provisioner", time.Minute, func(ctx context.Context) error {
			c, err := pvcs.Get(ctx, pvc.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := c.Annotations["volume.kubernetes.io/storage-provisioner"]; got != sc.Provisioner {
				return fmt.Errorf("claim %s: provisioner annotation %q, want %q", c.Name, got, sc.Provisioner)
			}
			if c.Status.Phase != corev1.ClaimPending {
				return fmt.Errorf("claim %s is %s, though no provisioner runs here", c.Name, c.Status.Phase)
			}
			return nil
		})
		// ...which external-provisioner answers only when it is the name
		// the driver behind its socket registers (GetPluginInfo): the
		// fixed name of the driver's contract, the CSIDriver object's.
		if sc.Provisioner != objects.CSIFileContract.DriverName {
			t.Errorf("claims of %s go to %q; the driver registers %q", class, sc.Provisioner, objects.CSIFileContract.DriverName)
		}
		if _, err := env.Client.StorageV1().CSIDrivers().Get(ctx, sc.Provisioner, metav1.GetOptions{}); err != nil {
			t.Errorf("no CSIDriver %s for the class's provisioner: %v", sc.Provisioner, err)
		}
		// The provisioner dials the socket the driver serves, in a volume
		// both mount.
		dep, err := env.Client.AppsV1().Deployments(ns).Get(ctx, objects.CSIControllerName(name, file), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var driverSocket, provisionerSocket string
		var provisionerArgs []string
		mounts := map[string]map[string]string{} // container -> volume -> path
		for _, c := range dep.Spec.Template.Spec.Containers {
			mounts[c.Name] = map[string]string{}
			for _, m := range c.VolumeMounts {
				mounts[c.Name][m.Name] = m.MountPath
			}
			for _, a := range c.Args {
				switch flag, v, _ := strings.Cut(a, "="); {
				case objects.ContractOf(c.Name, false) == &objects.CSIFileContract && flag == "--endpoint":
					driverSocket = strings.TrimPrefix(v, "unix://")
				case objects.ContractOf(c.Name, false) == &objects.ProvisionerContract && flag == "--csi-address":
					provisionerSocket = v
				}
			}
			if objects.ContractOf(c.Name, false) == &objects.ProvisionerContract {
				provisionerArgs = c.Args
			}
		}
		if driverSocket == "" || driverSocket != provisionerSocket {
			t.Errorf("the driver serves %q, the provisioner dials %q", driverSocket, provisionerSocket)
		}
		shared := false
		for c, vols := range mounts {
			for vol, path := range vols {
				for c2, vols2 := range mounts {
					if c2 != c && vols2[vol] == path && strings.HasPrefix(driverSocket, path+"/") {
						shared = true
					}
				}
			}
		}
		if !shared {
			t.Errorf("no volume mounted by both containers holds the socket %s: %v", driverSocket, mounts)
		}
		// The parameters of CreateVolume: the class's, less the
		// csi.storage.k8s.io/ keys the provisioner consumes itself, plus
		// the claim's names with --extra-create-metadata. Each must be
		// one the driver reads (it would log and ignore any other).
		sent := map[string]string{}
		for k, v := range sc.Parameters {
			if !strings.HasPrefix(k, "csi.storage.k8s.io/") {
				sent[k] = v
			}
		}
		if slices.ContainsFunc(provisionerArgs, func(a string) bool {
			return a == "--extra-create-metadata" || a == "--extra-create-metadata=true"
		}) {
			for _, k := range []string{"csi.storage.k8s.io/pvc/name", "csi.storage.k8s.io/pvc/namespace", "csi.storage.k8s.io/pv/name"} {
				sent[k] = "set"
			}
		}
		for k := range sent {
			if !slices.Contains(objects.CSIFileParameters, k) {
				t.Errorf("CreateVolume would carry parameter %q, which the driver does not read", k)
			}
		}
		if err := pvcs.Delete(ctx, pvc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the API refuses block, naming the field", func(t *testing.T) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			c.Spec.Drivers = []operatorv1alpha1.GlusterDriver{file, block}
			_, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Update(ctx, c, metav1.UpdateOptions{})
			return err
		})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.drivers: block is not available") {
			t.Fatalf("adding block: %v, want a refusal naming spec.drivers", err)
		}
	})

	t.Run("a missing object of the driver is recreated", func(t *testing.T) {
		fileDS := objects.CSINodeDaemonSetName(name)
		old, err := env.Client.AppsV1().DaemonSets(ns).Get(ctx, fileDS, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Client.AppsV1().DaemonSets(ns).Delete(ctx, fileDS, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "file node plugin recreated", 2*time.Minute, func(ctx context.Context) error {
			ds, err := env.Client.AppsV1().DaemonSets(ns).Get(ctx, fileDS, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if ds.UID == old.UID {
				return fmt.Errorf("DaemonSet %s not yet deleted", fileDS)
			}
			return checkNodePlugin(ctx, ns, name, fileDS, "4.1.0")
		})
		noViolations(t)
	})

	t.Run("deleting the cluster removes every CSI object", func(t *testing.T) {
		if err := anthill.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		var last []string
		err := framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
			var err error
			last, err = leftovers(ctx, ns, name, nil)
			if err != nil {
				return false, err
			}
			if len(last) > 0 {
				return false, fmt.Errorf("left: %s", strings.Join(last, "; "))
			}
			return true, nil
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Fatal(err)
		}
	})
}
