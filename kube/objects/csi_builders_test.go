package objects

import (
	"fmt"
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

func TestLegacyCSIDriverNamesAreUniqueValidAndShort(t *testing.T) {
	if got := LegacyCSIDriverNames("storage", "gc"); !slices.Equal(got, []string{"gc.storage.file.gluster.org", "gc.storage.block.gluster.org"}) {
		t.Errorf("short names %q", got)
	}
	long := strings.Repeat("c", 120)
	seen := map[string]string{}
	for _, p := range [][2]string{
		{"storage", "gc"}, {"storage", long}, {"storage", long + "x"}, {strings.Repeat("n", 63), long},
		{"a-b", "c"}, {"a", "b-c"}, {"ns", strings.Repeat("a.", 30) + "b"},
	} {
		for _, got := range LegacyCSIDriverNames(p[0], p[1]) {
			if len(got) > 63 {
				t.Errorf("%v: %q is %d characters", p, got, len(got))
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("%v: %q is not a DNS subdomain: %v", p, got, errs)
			}
			if other, dup := seen[got]; dup {
				t.Errorf("%v and %s share the driver name %q", p, other, got)
			}
			seen[got] = p[0] + "/" + p[1]
		}
	}
}

func TestCSINodeDaemonSet(t *testing.T) {
	c := fixtures.CSICluster("gc")
	c.Spec.CSI = &operatorv1alpha1.CSISpec{FileImage: "quay.io/gluster/csi-file", Version: "4.0.0"}
	ds := CSINodeDaemonSet(c, fixtures.FileDriver, c.Spec.CSI.Version)

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
		t.Errorf("version annotation %q, want the version it was built at", got)
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
	for _, p := range []string{kubeletPodsDir, kubeletRegistryDir, kubeletPluginsDir + "/" + CSIDriverName(fixtures.FileDriver)} {
		if !paths[p] {
			t.Errorf("no hostPath %s in %v", p, paths)
		}
	}
	if !slices.Contains(spec.Containers[1].Args, "--kubelet-registration-path="+kubeletPluginsDir+"/"+CSIDriverName(fixtures.FileDriver)+"/csi.sock") {
		t.Errorf("registrar args %v", spec.Containers[1].Args)
	}
	if !slices.Contains(drv.Args, "--resturl=http://gc-mgmt.storage.svc:24007") || !slices.Contains(drv.Args, "--restsecret=$(REST_SECRET)") {
		t.Errorf("driver args %q", drv.Args)
	}
	var secret *corev1.SecretKeySelector
	for _, e := range drv.Env {
		if e.Name == envRESTSecret && e.ValueFrom != nil {
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

func TestCSIDriversUseTheAdminsSecretAndTrustTheCAThroughGo(t *testing.T) {
	for _, c := range []*operatorv1alpha1.GlusterCluster{fixtures.CSICluster("gc"), fixtures.External("gc", 0, fixtures.ExternalNode("10.0.0.1", ""))} {
		c.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: "http://127.0.0.1:1", AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "mine"}}
		c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca"}
		d := CSIControllerDeployment(c, fixtures.FileDriver, "4.1.0")
		drv := d.Spec.Template.Spec.Containers[0]
		if !slices.Contains(drv.Args, "--resturl=https://gc-mgmt.storage.svc:24007") {
			t.Errorf("%s: the drivers must use the management Service, over TLS with a CA; got %q", c.Spec.Mode, drv.Args)
		}
		// The driver has no CA option; Go reads its roots from SSL_CERT_FILE.
		if fxEnv(drv, envSSLCertFile) != csiCAFile {
			t.Errorf("%s: SSL_CERT_FILE %q", c.Spec.Mode, fxEnv(drv, envSSLCertFile))
		}
		var ca *corev1.SecretVolumeSource
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == volumeCA {
				ca = v.Secret
			}
		}
		if ca == nil || ca.SecretName != TLSTrustSecretName("gc") {
			t.Errorf("%s: the drivers mount the trust bundle alone, got %+v", c.Spec.Mode, ca)
		}
		for _, e := range drv.Env {
			if e.Name == envRESTSecret && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Name != "mine" || e.ValueFrom.SecretKeyRef.Key != AuthSecretKey) {
				t.Errorf("%s: GD2 secret %+v", c.Spec.Mode, e.ValueFrom)
			}
		}
	}
}

func TestDesiredCSIObjects(t *testing.T) {
	for _, drivers := range [][]operatorv1alpha1.GlusterDriver{nil, {fixtures.FileDriver}, {fixtures.BlockDriver, fixtures.FileDriver}} {
		t.Run(fmt.Sprintf("drivers %v give the file driver only: block is refused", drivers), func(t *testing.T) {
			o := DesiredCSIObjects(fixtures.CSICluster("gc", drivers...), "4.1.0")
			if len(o.Drivers) != 1 || len(o.NodePlugins) != 1 || len(o.Controllers) != 1 {
				t.Fatalf("objects %d drivers %d plugins %d controllers", len(o.Drivers), len(o.NodePlugins), len(o.Controllers))
			}
			if o.Drivers[0].Name != CSIFileDriverName {
				t.Errorf("driver %s", o.Drivers[0].Name)
			}
		})
	}
	t.Run("the provisioner may patch PersistentVolumes, as external-provisioner's finalizer needs", func(t *testing.T) {
		o := DesiredCSIObjects(fixtures.CSICluster("gc"), "4.1.0")
		for _, r := range o.ClusterRole.Rules {
			if slices.Contains(r.Resources, "persistentvolumes") && !slices.Contains(r.Verbs, "patch") {
				t.Errorf("PV verbs %v", r.Verbs)
			}
		}
	})
	t.Run("every object carries the cluster's labels; cluster-scoped ones its namespace", func(t *testing.T) {
		o := DesiredCSIObjects(fixtures.CSICluster("gc", fixtures.FileDriver, fixtures.BlockDriver), "4.1.0")
		var namespaced, clusterScoped []metav1.Object
		for _, x := range o.ServiceAccounts {
			namespaced = append(namespaced, x)
		}
		for _, x := range o.Controllers {
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
