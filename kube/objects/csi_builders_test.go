package objects

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

func TestCSIDriverNameIsUniqueValidAndShort(t *testing.T) {
	if got := CSIDriverName("storage", "gc", fixtures.FileDriver); got != "gc.storage.file.gluster.org" {
		t.Errorf("short name %q", got)
	}
	long := strings.Repeat("c", 120)
	seen := map[string]string{}
	for _, p := range [][2]string{
		{"storage", "gc"}, {"storage", long}, {"storage", long + "x"}, {strings.Repeat("n", 63), long},
		{"a-b", "c"}, {"a", "b-c"}, {"ns", strings.Repeat("a.", 30) + "b"},
	} {
		for _, k := range []operatorv1alpha1.GlusterDriver{fixtures.FileDriver, fixtures.BlockDriver} {
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
	c := fixtures.CSICluster("gc")
	c.Spec.CSI = &operatorv1alpha1.CSISpec{FileImage: "quay.io/gluster/csi-file", Version: "4.0.0"}
	ds := CSINodeDaemonSet(c, fixtures.FileDriver, CSIVersion(c))

	if ds.Name != CSINodeDaemonSetName("gc") || ds.Namespace != fixtures.Namespace {
		t.Errorf("name %s/%s", ds.Namespace, ds.Name)
	}
	for k, v := range map[string]string{LabelCluster: "gc", LabelComponent: ComponentCSINode, LabelManagedBy: ManagedByAnthill, LabelClusterNamespace: fixtures.Namespace} {
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
	for _, p := range []string{kubeletPodsDir, kubeletRegistryDir, kubeletPluginsDir + "/" + CSIDriverName(fixtures.Namespace, "gc", fixtures.FileDriver)} {
		if !paths[p] {
			t.Errorf("no hostPath %s in %v", p, paths)
		}
	}
	if !slices.Contains(spec.Containers[1].Args, "--kubelet-registration-path="+kubeletPluginsDir+"/"+CSIDriverName(fixtures.Namespace, "gc", fixtures.FileDriver)+"/csi.sock") {
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
	c := fixtures.CSICluster("gc")
	c.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: "http://127.0.0.1:1", AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "mine"}}
	c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca"}
	d := CSIControllerDeployment(c, fixtures.FileDriver, "4.1.0")
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
	if ca == nil || ca.SecretName != CSITLSSecretName("gc") {
		t.Errorf("the drivers mount their issued secret (trust bundle and client pair), got %+v", ca)
	}
	if fxEnv(drv, "GD2_CLIENT_CERT_FILE") != csiCADir+"/tls.crt" || fxEnv(drv, "GD2_CLIENT_KEY_FILE") != csiCADir+"/tls.key" {
		t.Errorf("client pair env %q %q", fxEnv(drv, "GD2_CLIENT_CERT_FILE"), fxEnv(drv, "GD2_CLIENT_KEY_FILE"))
	}
	for _, e := range drv.Env {
		if e.Name == "GD2_SECRET" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Name != "mine" || e.ValueFrom.SecretKeyRef.Key != AuthSecretKey) {
			t.Errorf("GD2 secret %+v", e.ValueFrom)
		}
	}
}

func TestDesiredCSIObjects(t *testing.T) {
	t.Run("empty drivers means the file driver only", func(t *testing.T) {
		o := DesiredCSIObjects(fixtures.CSICluster("gc"), "4.1.0")
		if len(o.Drivers) != 1 || len(o.NodePlugins) != 1 || len(o.Controllers) != 1 || len(o.BlockTargets) != 0 {
			t.Fatalf("objects %d drivers %d plugins %d controllers %d targets", len(o.Drivers), len(o.NodePlugins), len(o.Controllers), len(o.BlockTargets))
		}
		if o.Drivers[0].Name != CSIDriverName(fixtures.Namespace, "gc", fixtures.FileDriver) {
			t.Errorf("driver %s", o.Drivers[0].Name)
		}
	})
	t.Run("block adds its driver and one target per zone next to the Gluster pods", func(t *testing.T) {
		c := fixtures.CSICluster("gc", fixtures.BlockDriver, fixtures.FileDriver)
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
		c := fixtures.CSICluster("gc", fixtures.BlockDriver)
		c.Spec.Mode, c.Spec.NodeTemplates = operatorv1alpha1.ClusterModeExternal, nil
		o := DesiredCSIObjects(c, "4.1.0")
		if len(o.Drivers) != 1 || len(o.BlockTargets) != 0 {
			t.Errorf("%d drivers, %d targets", len(o.Drivers), len(o.BlockTargets))
		}
	})
	t.Run("every object carries the cluster's labels; cluster-scoped ones its namespace", func(t *testing.T) {
		o := DesiredCSIObjects(fixtures.CSICluster("gc", fixtures.FileDriver, fixtures.BlockDriver), "4.1.0")
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
			if l[LabelCluster] != "gc" || l[LabelManagedBy] != ManagedByAnthill || l[LabelClusterNamespace] != fixtures.Namespace {
				t.Errorf("%s labels %v", m.GetName(), l)
			}
			if !CSINamespacedSelector("gc").Matches(labels.Set(l)) && m.GetNamespace() != "" {
				t.Errorf("%s escapes the deletion selector", m.GetName())
			}
		}
		for _, m := range namespaced {
			if m.GetNamespace() != fixtures.Namespace || len(m.GetOwnerReferences()) != 1 {
				t.Errorf("%s: namespace %q, owners %v", m.GetName(), m.GetNamespace(), m.GetOwnerReferences())
			}
		}
		for _, m := range clusterScoped {
			if m.GetNamespace() != "" || len(m.GetOwnerReferences()) != 0 || !CSIClusterScopedSelector(fixtures.Namespace, "gc").Matches(labels.Set(m.GetLabels())) {
				t.Errorf("cluster-scoped %s: namespace %q, owners %v, labels %v", m.GetName(), m.GetNamespace(), m.GetOwnerReferences(), m.GetLabels())
			}
		}
		if s := o.ClusterRoleBinding.Subjects[0]; s.Name != CSIControllerServiceAccountName("gc") || s.Namespace != fixtures.Namespace || o.ClusterRoleBinding.RoleRef.Name != o.ClusterRole.Name {
			t.Errorf("binding %+v", o.ClusterRoleBinding)
		}
	})
}

func fmtSel(s *metav1.LabelSelector) string { return metav1.FormatLabelSelector(s) }
