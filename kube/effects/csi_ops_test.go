package effects

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// fxCSIKinds lists the CSI objects in the fake clientset by kind.
func (f *fxKube) csiNames(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(kind string, names ...string) {
		slices.Sort(names)
		out[kind] = names
	}
	ds, err := f.kube.AppsV1().DaemonSets(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	var n []string
	for _, o := range ds.Items {
		n = append(n, o.Name)
	}
	add("DaemonSet", n...)
	deps, err := f.kube.AppsV1().Deployments(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	n = nil
	for _, o := range deps.Items {
		n = append(n, o.Name)
	}
	add("Deployment", n...)
	sas, err := f.kube.CoreV1().ServiceAccounts(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	n = nil
	for _, o := range sas.Items {
		n = append(n, o.Name)
	}
	add("ServiceAccount", n...)
	drv, err := f.kube.StorageV1().CSIDrivers().List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	n = nil
	for _, o := range drv.Items {
		n = append(n, o.Name)
	}
	add("CSIDriver", n...)
	crs, err := f.kube.RbacV1().ClusterRoles().List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	n = nil
	for _, o := range crs.Items {
		n = append(n, o.Name)
	}
	add("ClusterRole", n...)
	crbs, err := f.kube.RbacV1().ClusterRoleBindings().List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	n = nil
	for _, o := range crbs.Items {
		n = append(n, o.Name)
	}
	add("ClusterRoleBinding", n...)
	scs, err := f.kube.StorageV1().StorageClasses().List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	n = nil
	for _, o := range scs.Items {
		n = append(n, o.Name)
	}
	add("StorageClass", n...)
	return out
}

func TestEnsureCSIDriversCreatesOnlyWhatIsMissing(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	f := newFxKube(t, nil, c)
	fixtures.Must(t, f.ops.EnsureCSIDrivers(fixtures.Ctx, fixtures.ClusterTarget(c)), "ensure")
	got := f.csiNames(t)
	want := map[string][]string{
		"DaemonSet":          {"gc-csi-node"},
		"Deployment":         {"gc-csi-controller"},
		"ServiceAccount":     {"gc-csi-controller", "gc-csi-node"},
		"CSIDriver":          {objects.CSIFileDriverName},
		"ClusterRole":        {"anthill-csi:storage:gc"},
		"ClusterRoleBinding": {"anthill-csi:storage:gc"},
		"StorageClass":       {"gc-file"},
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}

	// The upgrade machine moved the plugin to 4.2.0 and an admin edited
	// it; the controller is deleted. Ensuring again creates the controller
	// alone, at its sibling's version, and leaves the plugin as it is.
	ds, err := f.kube.AppsV1().DaemonSets(fixtures.Namespace).Get(fixtures.Ctx, "gc-csi-node", metav1.GetOptions{})
	fixtures.Must(t, err, "get")
	ds.Spec.Template.Annotations[objects.AnnotationVersion] = "4.2.0"
	ds.Spec.Template.Spec.Containers[0].Image = "admin/edit:1"
	_, err = f.kube.AppsV1().DaemonSets(fixtures.Namespace).Update(fixtures.Ctx, ds, metav1.UpdateOptions{})
	fixtures.Must(t, err, "update")
	fixtures.Must(t, f.kube.AppsV1().Deployments(fixtures.Namespace).Delete(fixtures.Ctx, "gc-csi-controller", metav1.DeleteOptions{}), "delete")
	f.kube.ClearActions()
	fixtures.Must(t, f.ops.EnsureCSIDrivers(fixtures.Ctx, fixtures.ClusterTarget(c)), "ensure again")
	for _, a := range f.kube.Actions() {
		// Listing StorageClasses finds the ones no longer wanted.
		if v := a.GetVerb(); v != "create" && v != "get" && (v != "list" || a.GetResource().Resource != "storageclasses") {
			t.Errorf("EnsureCSIDrivers must only create, it did %s %s", v, a.GetResource().Resource)
		}
	}
	file, err := f.kube.AppsV1().DaemonSets(fixtures.Namespace).Get(fixtures.Ctx, "gc-csi-node", metav1.GetOptions{})
	fixtures.Must(t, err, "get")
	if file.Spec.Template.Spec.Containers[0].Image != "admin/edit:1" {
		t.Error("an existing DaemonSet was rewritten")
	}
	ctrl, err := f.kube.AppsV1().Deployments(fixtures.Namespace).Get(fixtures.Ctx, "gc-csi-controller", metav1.GetOptions{})
	fixtures.Must(t, err, "get controller")
	if v := ctrl.Spec.Template.Annotations[objects.AnnotationVersion]; v != "4.2.0" {
		t.Errorf("the controller was created at %q, want its sibling's 4.2.0", v)
	}
}

// The driver's name is fixed: while one cluster runs it, another gets no
// CSI object; once the first is deleted, the other gets the driver.
func TestDeleteClusterInfraDeletesEveryCSIObject(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	other := fixtures.CSICluster("gc", fixtures.FileDriver)
	other.Namespace, other.UID = "elsewhere", "uid-other"
	admins := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "gc.storage.file.gluster.org-admin", Labels: map[string]string{objects.LabelCluster: "gc"}}}
	adminsClass := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gc-admin", Labels: map[string]string{objects.LabelCluster: "gc"}}, Provisioner: admins.Name}
	// The other cluster's classes need names of their own: gc-file and
	// gc-block are this cluster's.
	other.Spec.CSI = &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{File: &operatorv1alpha1.StorageClassSpec{Name: "elsewhere-file"}}}
	f := newFxKube(t, []runtime.Object{admins, adminsClass}, c, other)
	fixtures.Must(t, f.ops.EnsureCSIDrivers(fixtures.Ctx, fixtures.ClusterTarget(c)), "ensure")
	if err := f.ops.EnsureCSIDrivers(fixtures.Ctx, fixtures.ClusterTarget(other)); err == nil || !strings.Contains(err.Error(), "one Gluster cluster per Kubernetes cluster") {
		t.Errorf("a second cluster's CSI: %v, want a refusal", err)
	}
	if ods, err := f.kube.AppsV1().DaemonSets("elsewhere").List(fixtures.Ctx, metav1.ListOptions{}); err != nil || len(ods.Items) != 0 {
		t.Errorf("the second cluster got node plugins %v (%v)", ods, err)
	}
	fixtures.Must(t, f.ops.DeleteClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "delete")
	fixtures.Must(t, f.ops.DeleteClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "delete again")
	got := f.csiNames(t)
	for _, k := range []string{"DaemonSet", "Deployment", "ServiceAccount"} {
		if len(got[k]) != 0 {
			t.Errorf("%s left: %v", k, got[k])
		}
	}
	if want := []string{admins.Name}; !slices.Equal(got["CSIDriver"], want) {
		t.Errorf("CSIDrivers %v, want only the admin's %v", got["CSIDriver"], want)
	}
	if want := []string{adminsClass.Name}; !slices.Equal(got["StorageClass"], want) {
		t.Errorf("StorageClasses %v, want only the admin's %v", got["StorageClass"], want)
	}
	for _, k := range []string{"ClusterRole", "ClusterRoleBinding"} {
		if len(got[k]) != 0 {
			t.Errorf("%s left: %v", k, got[k])
		}
	}
	fixtures.Must(t, f.ops.EnsureCSIDrivers(fixtures.Ctx, fixtures.ClusterTarget(other)), "ensure other once the driver is free")
	d, err := f.kube.StorageV1().CSIDrivers().Get(fixtures.Ctx, objects.CSIFileDriverName, metav1.GetOptions{})
	fixtures.Must(t, err, "get driver")
	if d.Labels[objects.LabelClusterNamespace] != "elsewhere" {
		t.Errorf("the driver is %v's", d.Labels)
	}
}

// fxPluginPod is a node plugin pod of cluster gc on node at version.
func fxPluginPod(name, node, version string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: fixtures.Namespace, UID: types.UID("uid-" + name),
			Labels:      map[string]string{objects.LabelCluster: "gc", objects.LabelComponent: objects.ComponentCSINode, objects.LabelManagedBy: objects.ManagedByAnthill},
			Annotations: map[string]string{objects.AnnotationVersion: version},
		},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		}},
	}
}

// fxVolumeWorld: node-b runs an app pod whose claim is bound to a volume
// of gc's file driver; node-d runs one whose claim is bound to another
// driver's volume, and node-e one that has finished.
func fxVolumeWorld() []runtime.Object {
	pv := func(name, driver, claim string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: name}},
				ClaimRef:               &corev1.ObjectReference{Namespace: "apps", Name: claim},
			},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
		}
	}
	app := func(name, node, claim string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"},
			Spec: corev1.PodSpec{NodeName: node, Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}}},
			Status: corev1.PodStatus{Phase: phase},
		}
	}
	return []runtime.Object{
		pv("pv-ours", objects.CSIDriverName(fixtures.FileDriver), "data-ours"),
		pv("pv-theirs", "ebs.csi.aws.com", "data-theirs"),
		pv("pv-done", objects.CSIDriverName(fixtures.FileDriver), "data-done"),
		app("app-b", "node-b", "data-ours", corev1.PodRunning),
		app("app-d", "node-d", "data-theirs", corev1.PodRunning),
		app("app-e", "node-e", "data-done", corev1.PodSucceeded),
	}
}

func TestSetCSIVersionRestartsOnlyPluginsOnNodesWithoutMounts(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	// An untagged image of the admin's is tagged with the version.
	c.Spec.CSI = &operatorv1alpha1.CSISpec{Version: "4.1.0", FileImage: "quay.io/example/csi-file"}
	objs := objects.DesiredCSIObjects(c, "4.1.0")
	kubeObjs := append(fxVolumeWorld(), objs.NodePlugins[0], objs.Controllers[0],
		fxPluginPod("p-a", "node-a", "4.1.0"), fxPluginPod("p-b", "node-b", "4.1.0"),
		fxPluginPod("p-c", "node-c", "4.2.0"), fxPluginPod("p-d", "node-d", "4.1.0"), fxPluginPod("p-e", "node-e", "4.1.0"))
	f := newFxKube(t, kubeObjs, c)
	fixtures.Must(t, f.ops.SetCSIVersion(fixtures.Ctx, fixtures.ClusterTarget(c), "4.2.0"), "set")

	ds, err := f.kube.AppsV1().DaemonSets(fixtures.Namespace).Get(fixtures.Ctx, "gc-csi-node", metav1.GetOptions{})
	fixtures.Must(t, err, "get")
	if v := ds.Spec.Template.Annotations[objects.AnnotationVersion]; v != "4.2.0" || ds.Spec.Template.Spec.Containers[0].Image != "quay.io/example/csi-file:4.2.0" {
		t.Errorf("DaemonSet at %q with %s", v, ds.Spec.Template.Spec.Containers[0].Image)
	}
	if ds.Spec.Template.Spec.Containers[1].Image != objects.DefaultImages.CSINodeRegistrar {
		t.Errorf("the registrar sidecar changed to %s", ds.Spec.Template.Spec.Containers[1].Image)
	}
	dep, err := f.kube.AppsV1().Deployments(fixtures.Namespace).Get(fixtures.Ctx, "gc-csi-controller", metav1.GetOptions{})
	fixtures.Must(t, err, "get")
	if dep.Spec.Template.Spec.Containers[0].Image != "quay.io/example/csi-file:4.2.0" {
		t.Errorf("controller image %s", dep.Spec.Template.Spec.Containers[0].Image)
	}
	pods, err := f.kube.CoreV1().Pods(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list")
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	slices.Sort(left)
	// p-a (no mounts), p-d (another driver's volume) and p-e (its app pod
	// finished) restart; p-b is pinned by a mount in use; p-c already runs
	// the target.
	if want := []string{"p-b", "p-c"}; !slices.Equal(left, want) {
		t.Errorf("plugin pods left %v, want %v", left, want)
	}

	f.kube.ClearActions()
	fixtures.Must(t, f.ops.SetCSIVersion(fixtures.Ctx, fixtures.ClusterTarget(c), "4.2.0"), "repeat")
	for _, a := range f.kube.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" {
			t.Errorf("a repeat did %s %s", v, a.GetResource().Resource)
		}
	}
}

func TestCSIReaderFillUpgradeCountsPinnedAndStalePlugins(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	objs := objects.DesiredCSIObjects(c, "4.2.0")
	objs.NodePlugins[0].Spec.Template.Annotations[objects.AnnotationVersion] = "4.1.0" // not yet set

	dsIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, d := range objs.NodePlugins {
		fixtures.Must(t, dsIdx.Add(d), "add")
	}
	notReady := fxPluginPod("p-f", "node-f", "4.2.0")
	notReady.Status.Conditions = nil
	deleting := fxPluginPod("p-g", "node-g", "4.1.0")
	deleting.DeletionTimestamp = &metav1.Time{}
	pluginIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range []*corev1.Pod{
		fxPluginPod("p-a", "node-a", "4.1.0"), fxPluginPod("p-b", "node-b", "4.1.0"),
		fxPluginPod("p-c", "node-c", "4.2.0"), notReady, deleting,
	} {
		fixtures.Must(t, pluginIdx.Add(p), "add")
	}
	pvIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	appIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range fxVolumeWorld() {
		switch o := o.(type) {
		case *corev1.PersistentVolume:
			fixtures.Must(t, pvIdx.Add(o), "add")
		case *corev1.Pod:
			fixtures.Must(t, appIdx.Add(o), "add")
		}
	}
	pvs, apps := corev1listers.NewPersistentVolumeLister(pvIdx), corev1listers.NewPodLister(appIdx)
	r := CSIReader{
		DaemonSets: appsv1listers.NewDaemonSetLister(dsIdx), Pods: corev1listers.NewPodLister(pluginIdx),
		Pinned: func(_ context.Context, c *operatorv1alpha1.GlusterCluster) (map[string]bool, error) {
			all, err := pvs.List(labels.Everything())
			if err != nil {
				return nil, err
			}
			return pinnedNodeSet(objects.CSIDriverNames(c), all, func(ns string) ([]*corev1.Pod, error) {
				return apps.Pods(ns).List(labels.Everything())
			})
		},
	}
	var snap states.UpgradeSnapshot
	fixtures.Must(t, r.FillUpgrade(fixtures.Ctx, c, "4.2.0", &snap), "fill")
	// p-a stale, p-b pinned, p-c at target, p-f restarting, p-g gone.
	want := [5]any{"4.1.0", 4, 1, 1, 1}
	if got := [5]any{snap.CSIClientVersion, snap.CSINodesTotal, snap.CSINodesAtTarget, snap.CSINodesPinned, snap.CSINodesStale}; got != want {
		t.Errorf("snapshot %+v, want %+v", snap, want)
	}

	// Without the volume reader nothing is pinned: the upgrade waits.
	r.Pinned = nil
	snap = states.UpgradeSnapshot{}
	fixtures.Must(t, r.FillUpgrade(fixtures.Ctx, c, "4.2.0", &snap), "fill")
	if snap.CSINodesPinned != 0 || snap.CSINodesStale != 2 {
		t.Errorf("without volume listers: %+v", snap)
	}
}
