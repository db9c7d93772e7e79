package kube

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

var (
	fxFile  = operatorv1alpha1.GlusterDriverFile
	fxBlock = operatorv1alpha1.GlusterDriverBlock
)

func fxCSICluster(name string, drivers ...operatorv1alpha1.GlusterDriver) *operatorv1alpha1.GlusterCluster {
	c := fxCluster(name)
	c.Spec.Drivers = drivers
	c.Spec.NodeTemplates = append(c.Spec.NodeTemplates,
		operatorv1alpha1.NodeTemplate{Name: "z2", Zone: "zone-2", Storage: c.Spec.NodeTemplates[0].Storage},
		operatorv1alpha1.NodeTemplate{Name: "z2b", Zone: "zone-2", Storage: c.Spec.NodeTemplates[0].Storage},
	)
	return c
}

func TestCSIDriverNameIsUniqueValidAndShort(t *testing.T) {
	if got := CSIDriverName("storage", "gc", fxFile); got != "gc.storage.file.gluster.org" {
		t.Errorf("short name %q", got)
	}
	long := strings.Repeat("c", 120)
	seen := map[string]string{}
	for _, p := range [][2]string{
		{"storage", "gc"}, {"storage", long}, {"storage", long + "x"}, {strings.Repeat("n", 63), long},
		{"a-b", "c"}, {"a", "b-c"}, {"ns", strings.Repeat("a.", 30) + "b"},
	} {
		for _, k := range []operatorv1alpha1.GlusterDriver{fxFile, fxBlock} {
			got := CSIDriverName(p[0], p[1], k)
			if len(got) > 63 {
				t.Errorf("%v %s: %q is %d characters", p, k, got, len(got))
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("%v %s: %q is not a DNS subdomain: %v", p, k, got, errs)
			}
			if !strings.HasSuffix(got, "."+string(k)+".gluster.org") {
				t.Errorf("%v %s: %q does not end in its kind", p, k, got)
			}
			if other, dup := seen[got]; dup {
				t.Errorf("%v %s and %s share the driver name %q", p, k, other, got)
			}
			seen[got] = p[0] + "/" + p[1] + "/" + string(k)
		}
	}
}

func TestCSINodeDaemonSet(t *testing.T) {
	c := fxCSICluster("gc")
	c.Spec.CSI = &operatorv1alpha1.CSISpec{FileImage: "quay.io/gluster/csi-file", Version: "4.0.0"}
	ds := CSINodeDaemonSet(c, fxFile, CSIVersion(c))

	if ds.Name != CSINodeDaemonSetName("gc") || ds.Namespace != fxNamespace {
		t.Errorf("name %s/%s", ds.Namespace, ds.Name)
	}
	for k, v := range map[string]string{LabelCluster: "gc", LabelComponent: ComponentCSINode, LabelManagedBy: ManagedByAnthill, LabelClusterNamespace: fxNamespace} {
		if ds.Labels[k] != v || ds.Spec.Template.Labels[k] != v {
			t.Errorf("label %s: object %q, pods %q, want %q", k, ds.Labels[k], ds.Spec.Template.Labels[k], v)
		}
	}
	for k, v := range ds.Spec.Selector.MatchLabels {
		if ds.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod template", k, v)
		}
	}
	if _, ok := ds.Spec.Selector.MatchLabels[LabelManagedBy]; ok {
		t.Error("the immutable selector must not depend on managed-by")
	}
	if len(ds.OwnerReferences) != 1 || ds.OwnerReferences[0].UID != c.UID {
		t.Errorf("owner references %v", ds.OwnerReferences)
	}
	if got := ds.Spec.Template.Annotations[AnnotationVersion]; got != "4.0.0" {
		t.Errorf("version annotation %q, want spec.csi.version", got)
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		t.Errorf("update strategy %s, want OnDelete", ds.Spec.UpdateStrategy.Type)
	}
	spec := ds.Spec.Template.Spec
	if len(spec.Containers) != 2 || spec.Containers[1].Name != containerRegistrar {
		t.Fatalf("containers %v", spec.Containers)
	}
	drv := spec.Containers[0]
	if drv.Image != "quay.io/gluster/csi-file:4.0.0" {
		t.Errorf("driver image %s", drv.Image)
	}
	if drv.SecurityContext == nil || drv.SecurityContext.Privileged == nil || !*drv.SecurityContext.Privileged {
		t.Error("the node driver must be privileged")
	}
	var bidi bool
	for _, m := range drv.VolumeMounts {
		bidi = bidi || (m.MountPath == kubeletPodsDir && m.MountPropagation != nil && *m.MountPropagation == corev1.MountPropagationBidirectional)
	}
	if !bidi {
		t.Errorf("kubelet's pod directory is not mounted Bidirectional: %v", drv.VolumeMounts)
	}
	paths := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			paths[v.HostPath.Path] = true
		}
	}
	for _, p := range []string{kubeletPodsDir, kubeletRegistryDir, kubeletPluginsDir + "/" + CSIDriverName(fxNamespace, "gc", fxFile)} {
		if !paths[p] {
			t.Errorf("no hostPath %s in %v", p, paths)
		}
	}
	if !slices.Contains(spec.Containers[1].Args, "--kubelet-registration-path="+kubeletPluginsDir+"/"+CSIDriverName(fxNamespace, "gc", fxFile)+"/csi.sock") {
		t.Errorf("registrar args %v", spec.Containers[1].Args)
	}
	if got := fxEnv(drv, "GD2_ENDPOINT"); got != "http://gc-mgmt.storage.svc:24007" {
		t.Errorf("GD2 endpoint %q", got)
	}
	var secret *corev1.SecretKeySelector
	for _, e := range drv.Env {
		if e.Name == "GD2_SECRET" && e.ValueFrom != nil {
			secret = e.ValueFrom.SecretKeyRef
		}
	}
	if secret == nil || secret.Name != AuthSecretName("gc") || secret.Key != AuthSecretKey {
		t.Errorf("GD2 secret from %+v", secret)
	}
	if spec.ServiceAccountName != CSINodeServiceAccountName("gc") {
		t.Errorf("service account %s", spec.ServiceAccountName)
	}
}

func TestCSIDriversUseTheAdminsSecretAndCA(t *testing.T) {
	c := fxCSICluster("gc")
	c.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: "http://127.0.0.1:1", AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "mine"}}
	c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca"}
	d := CSIControllerDeployment(c, fxFile, "4.1.0")
	drv := d.Spec.Template.Spec.Containers[0]
	if got := fxEnv(drv, "GD2_ENDPOINT"); got != "https://gc-mgmt.storage.svc:24007" {
		t.Errorf("the drivers must use the management Service, over TLS with a CA; got %q", got)
	}
	if fxEnv(drv, "GD2_CA_FILE") != csiCAFile {
		t.Errorf("CA file %q", fxEnv(drv, "GD2_CA_FILE"))
	}
	var ca *corev1.SecretVolumeSource
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == volumeCA {
			ca = v.Secret
		}
	}
	if ca == nil || ca.SecretName != "gluster-ca" || ca.Items[0].Key != "ca.crt" {
		t.Errorf("CA volume %+v", ca)
	}
	for _, e := range drv.Env {
		if e.Name == "GD2_SECRET" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Name != "mine" || e.ValueFrom.SecretKeyRef.Key != AuthSecretKey) {
			t.Errorf("GD2 secret %+v", e.ValueFrom)
		}
	}
}

func TestDesiredCSIObjects(t *testing.T) {
	t.Run("empty drivers means the file driver only", func(t *testing.T) {
		o := DesiredCSIObjects(fxCSICluster("gc"), "4.1.0")
		if len(o.Drivers) != 1 || len(o.NodePlugins) != 1 || len(o.Controllers) != 1 || len(o.BlockTargets) != 0 {
			t.Fatalf("objects %d drivers %d plugins %d controllers %d targets", len(o.Drivers), len(o.NodePlugins), len(o.Controllers), len(o.BlockTargets))
		}
		if o.Drivers[0].Name != CSIDriverName(fxNamespace, "gc", fxFile) {
			t.Errorf("driver %s", o.Drivers[0].Name)
		}
	})
	t.Run("block adds its driver and one target per zone next to the Gluster pods", func(t *testing.T) {
		c := fxCSICluster("gc", fxBlock, fxFile)
		o := DesiredCSIObjects(c, "4.1.0")
		var names []string
		for _, d := range o.BlockTargets {
			names = append(names, d.Name)
			aff := d.Spec.Template.Spec.Affinity
			if aff == nil || aff.PodAffinity == nil || aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[LabelComponent] != ComponentGlusterNode {
				t.Errorf("target %s is not tied to the Gluster pods: %+v", d.Name, aff)
			}
		}
		if want := []string{"gc-block-target-zone-1", "gc-block-target-zone-2"}; !slices.Equal(names, want) {
			t.Errorf("targets %v, want %v", names, want)
		}
		if len(o.Drivers) != 2 || o.NodePlugins[1].Name != "gc-csi-block-node" || o.Controllers[1].Name != "gc-csi-block-controller" {
			t.Errorf("block objects %s %s", o.NodePlugins[1].Name, o.Controllers[1].Name)
		}
		// The two node plugins' selectors must not overlap.
		if fmtSel(o.NodePlugins[0].Spec.Selector) == fmtSel(o.NodePlugins[1].Spec.Selector) {
			t.Error("file and block node plugins select the same pods")
		}
	})
	t.Run("an external cluster gets drivers but no targets", func(t *testing.T) {
		c := fxCSICluster("gc", fxBlock)
		c.Spec.Mode, c.Spec.NodeTemplates = operatorv1alpha1.ClusterModeExternal, nil
		o := DesiredCSIObjects(c, "4.1.0")
		if len(o.Drivers) != 1 || len(o.BlockTargets) != 0 {
			t.Errorf("%d drivers, %d targets", len(o.Drivers), len(o.BlockTargets))
		}
	})
	t.Run("every object carries the cluster's labels; cluster-scoped ones its namespace", func(t *testing.T) {
		o := DesiredCSIObjects(fxCSICluster("gc", fxFile, fxBlock), "4.1.0")
		var namespaced, clusterScoped []metav1.Object
		for _, x := range o.ServiceAccounts {
			namespaced = append(namespaced, x)
		}
		for _, x := range append(o.Controllers, o.BlockTargets...) {
			namespaced = append(namespaced, x)
		}
		for _, x := range o.NodePlugins {
			namespaced = append(namespaced, x)
		}
		for _, x := range o.Drivers {
			clusterScoped = append(clusterScoped, x)
		}
		clusterScoped = append(clusterScoped, o.ClusterRole, o.ClusterRoleBinding)
		for _, m := range append(namespaced, clusterScoped...) {
			l := m.GetLabels()
			if l[LabelCluster] != "gc" || l[LabelManagedBy] != ManagedByAnthill || l[LabelClusterNamespace] != fxNamespace {
				t.Errorf("%s labels %v", m.GetName(), l)
			}
			if !csiNamespacedSelector("gc").Matches(labels.Set(l)) && m.GetNamespace() != "" {
				t.Errorf("%s escapes the deletion selector", m.GetName())
			}
		}
		for _, m := range namespaced {
			if m.GetNamespace() != fxNamespace || len(m.GetOwnerReferences()) != 1 {
				t.Errorf("%s: namespace %q, owners %v", m.GetName(), m.GetNamespace(), m.GetOwnerReferences())
			}
		}
		for _, m := range clusterScoped {
			if m.GetNamespace() != "" || len(m.GetOwnerReferences()) != 0 || !csiClusterScopedSelector(fxNamespace, "gc").Matches(labels.Set(m.GetLabels())) {
				t.Errorf("cluster-scoped %s: namespace %q, owners %v, labels %v", m.GetName(), m.GetNamespace(), m.GetOwnerReferences(), m.GetLabels())
			}
		}
		if s := o.ClusterRoleBinding.Subjects[0]; s.Name != CSIControllerServiceAccountName("gc") || s.Namespace != fxNamespace || o.ClusterRoleBinding.RoleRef.Name != o.ClusterRole.Name {
			t.Errorf("binding %+v", o.ClusterRoleBinding)
		}
	})
}

func fmtSel(s *metav1.LabelSelector) string { return metav1.FormatLabelSelector(s) }

// fxCSIKinds lists the CSI objects in the fake clientset by kind.
func (f *fxKube) csiNames(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(kind string, names ...string) {
		slices.Sort(names)
		out[kind] = names
	}
	ds, err := f.kube.AppsV1().DaemonSets(fxNamespace).List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
	var n []string
	for _, o := range ds.Items {
		n = append(n, o.Name)
	}
	add("DaemonSet", n...)
	deps, err := f.kube.AppsV1().Deployments(fxNamespace).List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
	n = nil
	for _, o := range deps.Items {
		n = append(n, o.Name)
	}
	add("Deployment", n...)
	sas, err := f.kube.CoreV1().ServiceAccounts(fxNamespace).List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
	n = nil
	for _, o := range sas.Items {
		n = append(n, o.Name)
	}
	add("ServiceAccount", n...)
	drv, err := f.kube.StorageV1().CSIDrivers().List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
	n = nil
	for _, o := range drv.Items {
		n = append(n, o.Name)
	}
	add("CSIDriver", n...)
	crs, err := f.kube.RbacV1().ClusterRoles().List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
	n = nil
	for _, o := range crs.Items {
		n = append(n, o.Name)
	}
	add("ClusterRole", n...)
	crbs, err := f.kube.RbacV1().ClusterRoleBindings().List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
	n = nil
	for _, o := range crbs.Items {
		n = append(n, o.Name)
	}
	add("ClusterRoleBinding", n...)
	return out
}

func TestEnsureCSIDriversCreatesOnlyWhatIsMissing(t *testing.T) {
	c := fxCSICluster("gc", fxFile)
	f := newFxKube(t, nil, c)
	fxMust(t, f.ops.EnsureCSIDrivers(fxCtx, fxClusterTarget(c)), "ensure")
	got := f.csiNames(t)
	want := map[string][]string{
		"DaemonSet":          {"gc-csi-node"},
		"Deployment":         {"gc-csi-controller"},
		"ServiceAccount":     {"gc-csi-controller", "gc-csi-node"},
		"CSIDriver":          {"gc.storage.file.gluster.org"},
		"ClusterRole":        {"anthill-csi:storage:gc"},
		"ClusterRoleBinding": {"anthill-csi:storage:gc"},
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}

	// The upgrade machine moved the file plugin to 4.2.0; block is added
	// with csi.version unset: block joins its sibling's version, and the
	// file plugin is not touched.
	ds, err := f.kube.AppsV1().DaemonSets(fxNamespace).Get(fxCtx, "gc-csi-node", metav1.GetOptions{})
	fxMust(t, err, "get")
	ds.Spec.Template.Annotations[AnnotationVersion] = "4.2.0"
	ds.Spec.Template.Spec.Containers[0].Image = "admin/edit:1"
	_, err = f.kube.AppsV1().DaemonSets(fxNamespace).Update(fxCtx, ds, metav1.UpdateOptions{})
	fxMust(t, err, "update")
	c.Spec.Drivers = []operatorv1alpha1.GlusterDriver{fxFile, fxBlock}
	_, err = f.crs.OperatorV1alpha1().GlusterClusters(fxNamespace).Update(fxCtx, c, metav1.UpdateOptions{})
	fxMust(t, err, "update cluster")
	f.kube.ClearActions()
	fxMust(t, f.ops.EnsureCSIDrivers(fxCtx, fxClusterTarget(c)), "ensure block")
	for _, a := range f.kube.Actions() {
		if v := a.GetVerb(); v != "create" && v != "get" {
			t.Errorf("EnsureCSIDrivers must only create, it did %s %s", v, a.GetResource().Resource)
		}
	}
	file, err := f.kube.AppsV1().DaemonSets(fxNamespace).Get(fxCtx, "gc-csi-node", metav1.GetOptions{})
	fxMust(t, err, "get")
	if file.Spec.Template.Spec.Containers[0].Image != "admin/edit:1" {
		t.Error("an existing DaemonSet was rewritten")
	}
	block, err := f.kube.AppsV1().DaemonSets(fxNamespace).Get(fxCtx, "gc-csi-block-node", metav1.GetOptions{})
	fxMust(t, err, "get block")
	if v := block.Spec.Template.Annotations[AnnotationVersion]; v != "4.2.0" {
		t.Errorf("the block plugin was created at %q, want its sibling's 4.2.0", v)
	}
	if got := f.csiNames(t)["Deployment"]; !slices.Equal(got, []string{"gc-block-target-zone-1", "gc-block-target-zone-2", "gc-csi-block-controller", "gc-csi-controller"}) {
		t.Errorf("deployments %v", got)
	}
}

func TestDeleteClusterInfraDeletesEveryCSIObject(t *testing.T) {
	c := fxCSICluster("gc", fxFile, fxBlock)
	other := fxCSICluster("gc", fxFile)
	other.Namespace, other.UID = "elsewhere", "uid-other"
	admins := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "gc.storage.file.gluster.org-admin", Labels: map[string]string{LabelCluster: "gc"}}}
	f := newFxKube(t, []runtime.Object{admins}, c, other)
	fxMust(t, f.ops.EnsureCSIDrivers(fxCtx, fxClusterTarget(c)), "ensure")
	fxMust(t, f.ops.EnsureCSIDrivers(fxCtx, fxClusterTarget(other)), "ensure other")
	fxMust(t, f.ops.DeleteClusterInfra(fxCtx, fxClusterTarget(c)), "delete")
	fxMust(t, f.ops.DeleteClusterInfra(fxCtx, fxClusterTarget(c)), "delete again")
	got := f.csiNames(t)
	for _, k := range []string{"DaemonSet", "Deployment", "ServiceAccount"} {
		if len(got[k]) != 0 {
			t.Errorf("%s left: %v", k, got[k])
		}
	}
	if want := []string{"gc.elsewhere.file.gluster.org", admins.Name}; !slices.Equal(got["CSIDriver"], want) {
		t.Errorf("CSIDrivers %v, want only the other cluster's and the admin's %v", got["CSIDriver"], want)
	}
	for _, k := range []string{"ClusterRole", "ClusterRoleBinding"} {
		if !slices.Equal(got[k], []string{"anthill-csi:elsewhere:gc"}) {
			t.Errorf("%s: %v, want only the other cluster's", k, got[k])
		}
	}
	ods, err := f.kube.AppsV1().DaemonSets("elsewhere").List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
	if len(ods.Items) != 1 {
		t.Errorf("the other cluster's node plugin was deleted")
	}
}

// fxPluginPod is a node plugin pod of cluster gc on node at version.
func fxPluginPod(name, node, version string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: fxNamespace, UID: types.UID("uid-" + name),
			Labels:      map[string]string{LabelCluster: "gc", LabelComponent: ComponentCSINode, LabelManagedBy: ManagedByAnthill},
			Annotations: map[string]string{AnnotationVersion: version},
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
		pv("pv-ours", CSIDriverName(fxNamespace, "gc", fxFile), "data-ours"),
		pv("pv-theirs", "ebs.csi.aws.com", "data-theirs"),
		pv("pv-done", CSIDriverName(fxNamespace, "gc", fxFile), "data-done"),
		app("app-b", "node-b", "data-ours", corev1.PodRunning),
		app("app-d", "node-d", "data-theirs", corev1.PodRunning),
		app("app-e", "node-e", "data-done", corev1.PodSucceeded),
	}
}

func TestSetCSIVersionRestartsOnlyPluginsOnNodesWithoutMounts(t *testing.T) {
	c := fxCSICluster("gc", fxFile)
	c.Spec.CSI = &operatorv1alpha1.CSISpec{Version: "4.1.0"}
	objs := DesiredCSIObjects(c, "4.1.0")
	kubeObjs := append(fxVolumeWorld(), objs.NodePlugins[0], objs.Controllers[0],
		fxPluginPod("p-a", "node-a", "4.1.0"), fxPluginPod("p-b", "node-b", "4.1.0"),
		fxPluginPod("p-c", "node-c", "4.2.0"), fxPluginPod("p-d", "node-d", "4.1.0"), fxPluginPod("p-e", "node-e", "4.1.0"))
	f := newFxKube(t, kubeObjs, c)
	fxMust(t, f.ops.SetCSIVersion(fxCtx, fxClusterTarget(c), "4.2.0"), "set")

	ds, err := f.kube.AppsV1().DaemonSets(fxNamespace).Get(fxCtx, "gc-csi-node", metav1.GetOptions{})
	fxMust(t, err, "get")
	if v := ds.Spec.Template.Annotations[AnnotationVersion]; v != "4.2.0" || ds.Spec.Template.Spec.Containers[0].Image != DefaultCSIFileImage+":4.2.0" {
		t.Errorf("DaemonSet at %q with %s", v, ds.Spec.Template.Spec.Containers[0].Image)
	}
	if ds.Spec.Template.Spec.Containers[1].Image != CSINodeRegistrarImage {
		t.Errorf("the registrar sidecar changed to %s", ds.Spec.Template.Spec.Containers[1].Image)
	}
	dep, err := f.kube.AppsV1().Deployments(fxNamespace).Get(fxCtx, "gc-csi-controller", metav1.GetOptions{})
	fxMust(t, err, "get")
	if dep.Spec.Template.Spec.Containers[0].Image != DefaultCSIFileImage+":4.2.0" {
		t.Errorf("controller image %s", dep.Spec.Template.Spec.Containers[0].Image)
	}
	pods, err := f.kube.CoreV1().Pods(fxNamespace).List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list")
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
	fxMust(t, f.ops.SetCSIVersion(fxCtx, fxClusterTarget(c), "4.2.0"), "repeat")
	for _, a := range f.kube.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" {
			t.Errorf("a repeat did %s %s", v, a.GetResource().Resource)
		}
	}
}

func TestCSIReaderFillUpgradeCountsPinnedAndStalePlugins(t *testing.T) {
	c := fxCSICluster("gc", fxFile, fxBlock)
	objs := DesiredCSIObjects(c, "4.2.0")
	objs.NodePlugins[1].Spec.Template.Annotations[AnnotationVersion] = "4.1.0" // block not yet set

	dsIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, d := range objs.NodePlugins {
		fxMust(t, dsIdx.Add(d), "add")
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
		fxMust(t, pluginIdx.Add(p), "add")
	}
	pvIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	appIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range fxVolumeWorld() {
		switch o := o.(type) {
		case *corev1.PersistentVolume:
			fxMust(t, pvIdx.Add(o), "add")
		case *corev1.Pod:
			fxMust(t, appIdx.Add(o), "add")
		}
	}
	pvs, apps := corev1listers.NewPersistentVolumeLister(pvIdx), corev1listers.NewPodLister(appIdx)
	r := csiReader{
		DaemonSets: appsv1listers.NewDaemonSetLister(dsIdx), Pods: corev1listers.NewPodLister(pluginIdx),
		Pinned: func(_ context.Context, c *operatorv1alpha1.GlusterCluster) (map[string]bool, error) {
			all, err := pvs.List(labels.Everything())
			if err != nil {
				return nil, err
			}
			return pinnedNodeSet(csiDriverNames(c), all, func(ns string) ([]*corev1.Pod, error) {
				return apps.Pods(ns).List(labels.Everything())
			})
		},
	}
	var snap states.UpgradeSnapshot
	fxMust(t, r.fillUpgrade(fxCtx, c, "4.2.0", &snap), "fill")
	// p-a stale, p-b pinned, p-c at target, p-f restarting, p-g gone.
	want := [5]any{"4.1.0", 4, 1, 1, 1}
	if got := [5]any{snap.CSIClientVersion, snap.CSINodesTotal, snap.CSINodesAtTarget, snap.CSINodesPinned, snap.CSINodesStale}; got != want {
		t.Errorf("snapshot %+v, want %+v", snap, want)
	}

	// Without the volume reader nothing is pinned: the upgrade waits.
	r.Pinned = nil
	snap = states.UpgradeSnapshot{}
	fxMust(t, r.fillUpgrade(fxCtx, c, "4.2.0", &snap), "fill")
	if snap.CSINodesPinned != 0 || snap.CSINodesStale != 2 {
		t.Errorf("without volume listers: %+v", snap)
	}
}
