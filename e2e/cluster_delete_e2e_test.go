//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

const (
	labelCluster   = "operator.gluster.org/cluster"
	labelManagedBy = "app.kubernetes.io/managed-by"
)

// TestClusterDelete deletes a Ready three-node cluster while a
// PersistentVolume provisioned from it still exists: the finalizer must
// hold the GlusterCluster in Deleting, naming the PV in a condition and an
// Event, and leave the nodes alone. Once the PV is gone the operator tears
// everything down, and afterwards nothing labelled with or owned by the
// cluster remains, of any kind it could have created.
func TestClusterDelete(t *testing.T) {
	aloneWithCSI(t, "PersistentVolumes under the CSI driver's fixed name hold every cluster's deletion")
	ns := newNamespace(t)
	const name = "teardown"
	ctx := context.Background()
	clusters := anthill.OperatorV1alpha1().GlusterClusters(ns)
	createClusterWith(t, ns, name, 1, withCSI(operatorv1alpha1.GlusterDriverFile))
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	// Every kind the "nothing remains" listing looks for must exist first,
	// or that listing would prove nothing about it.
	if err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
		kinds, err := presentKinds(ctx, ns, name)
		if err != nil {
			return false, err
		}
		var missing []string
		for _, k := range []string{"StatefulSet", "DaemonSet", "Deployment", "Pod", "PersistentVolumeClaim", "Service",
			"ServiceAccount", "CSIDriver", "ClusterRole", "ClusterRoleBinding"} {
			if !kinds[k] {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			return false, fmt.Errorf("no %s of the cluster yet", strings.Join(missing, ", "))
		}
		return true, nil
	}); err != nil {
		dumpNamespace(t, ns)
		t.Fatal(err)
	}
	c, err := clusters.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := c.UID
	owned := map[types.UID]string{uid: "GlusterCluster " + name}
	for _, n := range nodes {
		owned[n.UID] = "GlusterNode " + n.Name
	}

	// The disruption budgets exist before the deletion, so "nothing
	// remains" below proves they are removed, not that they never were.
	err = framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		l, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{LabelSelector: labelCluster + "=" + name})
		if err != nil {
			return false, err
		}
		return len(l.Items) == 3, fmt.Errorf("%d PodDisruptionBudgets, want one per zone", len(l.Items))
	})
	if err != nil {
		t.Fatal(err)
	}

	// A volume as the cluster's file CSI driver provisions it: its driver
	// name is the only link to the cluster (no anthill label).
	pvName := ns + "-vol"
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: objects.CSIDriverName(operatorv1alpha1.GlusterDriverFile), VolumeHandle: pvName},
			},
		},
	}
	if _, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})

	if err := clusters.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("the finalizer holds the cluster in Deleting and names the PersistentVolume", func(t *testing.T) {
		err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			c, err := clusters.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if c.Status.Phase != "Deleting" {
				return false, fmt.Errorf("phase %s", c.Status.Phase)
			}
			named := false
			for _, cond := range c.Status.Conditions {
				named = named || strings.Contains(cond.Message, pvName)
			}
			if !named {
				return false, fmt.Errorf("no condition names %s: %+v", pvName, c.Status.Conditions)
			}
			evs, err := env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
				FieldSelector: "involvedObject.kind=GlusterCluster,involvedObject.name=" + name,
			})
			if err != nil {
				return false, err
			}
			var msgs []string
			for _, e := range evs.Items {
				if strings.Contains(e.Message, pvName) && (e.Type == corev1.EventTypeWarning || e.Type == corev1.EventTypeNormal) {
					return true, nil
				}
				msgs = append(msgs, e.Reason+": "+e.Message)
			}
			return false, fmt.Errorf("no Event names %s: %q", pvName, msgs)
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Fatal(err)
		}
		// It stays that way: nothing is torn down while the PV exists.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			c, err := clusters.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the cluster must stay while its PV exists: %v", err)
			}
			if c.Status.Phase != "Deleting" {
				t.Fatalf("phase %s, want Deleting", c.Status.Phase)
			}
			got, desc, err := nodeStates(ctx, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 {
				t.Fatalf("the nodes must stay while the PV exists: %s", desc)
			}
			for _, n := range got {
				if n.DeletionTimestamp != nil || n.Status.State != "Online" {
					t.Fatalf("node %s was touched while the PV exists: state %s, deleting %t", n.Name, n.Status.State, n.DeletionTimestamp != nil)
				}
			}
			time.Sleep(500 * time.Millisecond)
		}
		noViolations(t)
	})

	t.Run("once the PersistentVolume is gone the cluster is deleted, although the operator is SIGKILLed mid-teardown", func(t *testing.T) {
		if err := env.Client.CoreV1().PersistentVolumes().Delete(ctx, pvName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Kill the operator once the first node is on its way out: the
		// teardown must pick up where it stopped.
		err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
			now, desc, err := nodeStates(ctx, ns, name)
			if err != nil {
				return false, err
			}
			for _, n := range now {
				if n.Status.State != "Online" {
					return true, nil
				}
			}
			return len(now) < len(nodes), fmt.Errorf("no node is leaving yet: %s", desc)
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Fatal(err)
		}
		restartOperator(t)
		err = framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
			c, err := clusters.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			_, desc, _ := nodeStates(ctx, ns, name)
			return false, fmt.Errorf("cluster %s (%v), nodes: %s", c.Status.Phase, c.Status.Conditions, desc)
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Fatal(err)
		}
	})

	t.Run("nothing labelled with or owned by the cluster remains", func(t *testing.T) {
		var last []string
		err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
			var err error
			last, err = leftovers(ctx, ns, name, owned)
			if err != nil {
				return false, err
			}
			if len(last) > 0 {
				return false, errors.New(strings.Join(last, "; "))
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("left behind after the cluster was deleted: %s (%v)", strings.Join(last, "; "), err)
		}
		noViolations(t)
	})
}

// presentKinds is the set of kinds leftovers reports for the cluster while
// it exists: what the "nothing remains" listing is able to see.
func presentKinds(ctx context.Context, ns, cluster string) (map[string]bool, error) {
	objs, err := leftovers(ctx, ns, cluster, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, o := range objs {
		out[strings.SplitN(o, " ", 2)[0]] = true
	}
	return out, nil
}

// leftovers lists, for every kind anthill creates or causes to exist, the
// objects in ns (and cluster-wide for cluster-scoped kinds) that carry the
// cluster's label, anthill's managed-by label, or an owner reference to the
// cluster or one of its nodes. The simulator's auth Secret is the test's
// own and is skipped.
func leftovers(ctx context.Context, ns, cluster string, owned map[types.UID]string) ([]string, error) {
	var out []string
	check := func(kind string, m metav1.Object) {
		if kind == "Secret" && m.GetNamespace() == ns && m.GetName() == framework.SimSecretName(cluster) {
			return
		}
		l := m.GetLabels()
		var why []string
		if l[labelCluster] == cluster {
			why = append(why, "cluster label")
		}
		if m.GetNamespace() == ns && l[labelManagedBy] == "anthill" {
			why = append(why, "managed by anthill")
		}
		for _, r := range m.GetOwnerReferences() {
			if o, ok := owned[r.UID]; ok {
				why = append(why, "owned by "+o)
			}
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("%s %s (%s)", kind, m.GetName(), strings.Join(why, ", ")))
		}
	}
	core := env.Client.CoreV1()
	lo := metav1.ListOptions{}

	gns, err := anthill.OperatorV1alpha1().GlusterNodes(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range gns.Items {
		n := &gns.Items[i]
		if n.Spec.Cluster == cluster {
			out = append(out, "GlusterNode "+n.Name+" (spec.cluster)")
			continue
		}
		check("GlusterNode", n)
	}
	gcs, err := anthill.OperatorV1alpha1().GlusterClusters(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range gcs.Items {
		if gcs.Items[i].Name == cluster {
			out = append(out, "GlusterCluster "+cluster)
		}
	}
	sts, err := env.Client.AppsV1().StatefulSets(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range sts.Items {
		check("StatefulSet", &sts.Items[i])
	}
	ds, err := env.Client.AppsV1().DaemonSets(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range ds.Items {
		check("DaemonSet", &ds.Items[i])
	}
	deps, err := env.Client.AppsV1().Deployments(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range deps.Items {
		check("Deployment", &deps.Items[i])
	}
	rss, err := env.Client.AppsV1().ControllerRevisions(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range rss.Items {
		check("ControllerRevision", &rss.Items[i])
	}
	pdbs, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range pdbs.Items {
		check("PodDisruptionBudget", &pdbs.Items[i])
	}
	pods, err := core.Pods(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		check("Pod", &pods.Items[i])
	}
	pvcs, err := core.PersistentVolumeClaims(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range pvcs.Items {
		check("PersistentVolumeClaim", &pvcs.Items[i])
	}
	svcs, err := core.Services(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range svcs.Items {
		check("Service", &svcs.Items[i])
	}
	secrets, err := core.Secrets(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range secrets.Items {
		check("Secret", &secrets.Items[i])
	}
	cms, err := core.ConfigMaps(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range cms.Items {
		check("ConfigMap", &cms.Items[i])
	}
	// Endpoints and EndpointSlices carry their Service's labels (slices
	// also an owner reference to it); none may outlive anthill's Services.
	eps, err := core.Endpoints(ns).List(ctx, lo) //nolint:staticcheck // the Endpoints API still exists and is mirrored
	if err != nil {
		return nil, err
	}
	for i := range eps.Items {
		check("Endpoints", &eps.Items[i])
	}
	slices, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range slices.Items {
		check("EndpointSlice", &slices.Items[i])
	}
	// Cluster-scoped kinds.
	pvs, err := core.PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: labelCluster + "=" + cluster})
	if err != nil {
		return nil, err
	}
	for i := range pvs.Items {
		check("PersistentVolume", &pvs.Items[i])
	}
	sas, err := core.ServiceAccounts(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range sas.Items {
		check("ServiceAccount", &sas.Items[i])
	}
	roles, err := env.Client.RbacV1().ClusterRoles().List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range roles.Items {
		check("ClusterRole", &roles.Items[i])
	}
	bindings, err := env.Client.RbacV1().ClusterRoleBindings().List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range bindings.Items {
		check("ClusterRoleBinding", &bindings.Items[i])
	}
	drivers, err := env.Client.StorageV1().CSIDrivers().List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range drivers.Items {
		check("CSIDriver", &drivers.Items[i])
	}
	classes, err := env.Client.StorageV1().StorageClasses().List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range classes.Items {
		check("StorageClass", &classes.Items[i])
	}
	sort.Strings(out)
	return out, nil
}
