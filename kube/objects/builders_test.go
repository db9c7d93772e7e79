package objects

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

func fxEnv(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func TestBuildGlusterImage(t *testing.T) {
	tests := []struct{ name, image, version, want string }{
		{"an untagged image gets the version as tag", "quay.io/gluster/gd2", "4.1.0", "quay.io/gluster/gd2:4.1.0"},
		{"a registry port is not a tag", "registry:5000/gd2", "4.1.0", "registry:5000/gd2:4.1.0"},
		{"a tagged image is kept as the admin pinned it", "quay.io/gluster/gd2:nightly", "4.1.0", "quay.io/gluster/gd2:nightly"},
		{"a digest-pinned image is kept", "quay.io/gluster/gd2@sha256:abcd", "4.1.0", "quay.io/gluster/gd2@sha256:abcd"},
		{"no version leaves the image alone", "quay.io/gluster/gd2", "", "quay.io/gluster/gd2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GlusterImage(tt.image, tt.version); got != tt.want {
				t.Errorf("GlusterImage(%q, %q) = %q, want %q", tt.image, tt.version, got, tt.want)
			}
		})
	}
}

// A cluster that names no image runs the pinned GD2 image at every
// version (upstream built no image per Gluster version), so a version
// change restarts its servers on the same image; a cluster's own image
// follows GlusterImage. The StatefulSet runs what GD2Image says.
func TestBuildGD2Image(t *testing.T) {
	tests := []struct {
		name    string
		gluster *operatorv1alpha1.GlusterServerSpec
		version string
		want    string
	}{
		{"no gluster spec runs the pin", nil, "4.1.0", DefaultImages.GD2},
		{"no image runs the pin, untagged by version", &operatorv1alpha1.GlusterServerSpec{Version: "4.1.1"}, "4.1.1", DefaultImages.GD2},
		{"no image and no version runs the pin", &operatorv1alpha1.GlusterServerSpec{}, "", DefaultImages.GD2},
		{"an untagged image of the admin's gets the version", &operatorv1alpha1.GlusterServerSpec{Image: "mirror.example/gd2"}, "4.1.1", "mirror.example/gd2:4.1.1"},
		{"a pinned image of the admin's is kept", &operatorv1alpha1.GlusterServerSpec{Image: "mirror.example/gd2@sha256:ab"}, "4.1.1", "mirror.example/gd2@sha256:ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixtures.Cluster("gc")
			c.Spec.Gluster = tt.gluster
			if got := GD2Image(c, tt.version); got != tt.want {
				t.Errorf("GD2Image = %q, want %q", got, tt.want)
			}
			n := fixtures.Node("gc", "gc-z1-abcde", fixtures.PVCStorage(1))
			if got := ContainerImages(NodeStatefulSet(c, n, tt.version).Spec.Template.Spec)[ContainerGD2]; got != tt.want {
				t.Errorf("the StatefulSet runs %q, want %q", got, tt.want)
			}
		})
	}
	if !strings.HasPrefix(DefaultImages.GD2, "docker.io/gluster/glusterd2-nightly@sha256:") {
		t.Errorf("the pinned GD2 image %q is not glusterd2-nightly at a digest, the only GD2 image upstream built", DefaultImages.GD2)
	}
}

func TestBuildNodeStatefulSet(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "gc-z1-abcde", fixtures.PVCStorage(2))
	sts := NodeStatefulSet(c, n, "4.1.0")

	if sts.Name != "gc-z1-abcde" || sts.Namespace != fixtures.Namespace {
		t.Fatalf("name = %s/%s", sts.Namespace, sts.Name)
	}
	if *sts.Spec.Replicas != 1 || sts.Spec.ServiceName != "gc-nodes" {
		t.Errorf("replicas %d, serviceName %q", *sts.Spec.Replicas, sts.Spec.ServiceName)
	}
	for k, v := range map[string]string{LabelCluster: "gc", LabelNode: n.Name, LabelComponent: ComponentGlusterNode, LabelManagedBy: ManagedByAnthill} {
		if sts.Labels[k] != v || sts.Spec.Template.Labels[k] != v {
			t.Errorf("label %s: object %q, pod %q, want %q", k, sts.Labels[k], sts.Spec.Template.Labels[k], v)
		}
	}
	for k, v := range sts.Spec.Selector.MatchLabels {
		if sts.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod template", k, v)
		}
	}
	if len(sts.OwnerReferences) != 1 || sts.OwnerReferences[0].Kind != "GlusterNode" || sts.OwnerReferences[0].UID != n.UID || !ptr.Deref(sts.OwnerReferences[0].Controller, false) {
		t.Errorf("owner = %+v, want the GlusterNode as controller", sts.OwnerReferences)
	}
	if sts.Spec.UpdateStrategy.Type != "OnDelete" {
		t.Errorf("update strategy %q: only the operator may restart a Gluster node", sts.Spec.UpdateStrategy.Type)
	}
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted != "Retain" || p.WhenScaled != "Retain" {
		t.Errorf("claim retention %+v: brick claims must outlive the StatefulSet", p)
	}
	if got := sts.Spec.Template.Annotations[AnnotationVersion]; got != "4.1.0" {
		t.Errorf("version annotation %q", got)
	}

	pod := sts.Spec.Template.Spec
	ctr := pod.Containers[0]
	if ctr.Image != "quay.io/gluster/gd2:4.1.0" {
		t.Errorf("image %q", ctr.Image)
	}
	for k, v := range map[string]string{
		"GD2_PEERADDRESS":   "gc-z1-abcde-0.gc-nodes.storage.svc:24008",
		"GD2_CLIENTADDRESS": "gc-z1-abcde-0.gc-nodes.storage.svc:24007",
		"GD2_ETCDENDPOINTS": "http://gc-etcd.storage.svc:2379",
		"GD2_RESTAUTH":      "true",
	} {
		if got := fxEnv(ctr, k); got != v {
			t.Errorf("env %s = %q, want %q", k, got, v)
		}
	}
	if pr := ctr.ReadinessProbe; pr == nil || pr.HTTPGet == nil || pr.HTTPGet.Path != "/ping" || pr.HTTPGet.Port.IntValue() != 24007 {
		t.Errorf("readiness probe %+v", pr)
	}

	var authMount *corev1.VolumeMount
	for i, m := range ctr.VolumeMounts {
		if m.MountPath == "/var/lib/glusterd2/auth" {
			authMount = &ctr.VolumeMounts[i]
		}
	}
	if authMount == nil || authMount.SubPath == "" || !authMount.ReadOnly {
		t.Fatalf("auth secret mount %+v", authMount)
	}
	var authVol *corev1.Volume
	for i, v := range pod.Volumes {
		if v.Name == authMount.Name {
			authVol = &pod.Volumes[i]
		}
	}
	if authVol == nil || authVol.Secret == nil || authVol.Secret.SecretName != "gc-gd2-auth" ||
		len(authVol.Secret.Items) != 1 || authVol.Secret.Items[0].Key != "secret" || authVol.Secret.Items[0].Path != authMount.SubPath {
		t.Errorf("auth volume %+v", authVol)
	}

	if len(sts.Spec.VolumeClaimTemplates) != 3 {
		t.Fatalf("%d claim templates, want the state claim and 2 brick claims", len(sts.Spec.VolumeClaimTemplates))
	}
	state := sts.Spec.VolumeClaimTemplates[0]
	if state.Name != StateClaimTemplate || ptr.Deref(state.Spec.VolumeMode, "") != corev1.PersistentVolumeFilesystem ||
		ptr.Deref(state.Spec.StorageClassName, "") != "fast" || state.Labels[LabelNode] != n.Name {
		t.Errorf("state claim %+v", state)
	}
	var stateMounted bool
	for _, m := range pod.Containers[0].VolumeMounts {
		stateMounted = stateMounted || (m.Name == StateClaimTemplate && m.MountPath == GD2StateDir)
	}
	if !stateMounted {
		t.Errorf("GD2's state directory is not on the state claim: %+v", pod.Containers[0].VolumeMounts)
	}
	for i, claim := range sts.Spec.VolumeClaimTemplates[1:] {
		if claim.Name != BrickClaimTemplateName(i) {
			t.Errorf("claim %d named %q", i, claim.Name)
		}
		if ptr.Deref(claim.Spec.VolumeMode, "") != corev1.PersistentVolumeBlock {
			t.Errorf("claim %d volume mode %v, want Block", i, claim.Spec.VolumeMode)
		}
		if !slices.Equal(claim.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
			t.Errorf("claim %d access modes %v", i, claim.Spec.AccessModes)
		}
		if ptr.Deref(claim.Spec.StorageClassName, "") != "fast" {
			t.Errorf("claim %d storage class %v", i, claim.Spec.StorageClassName)
		}
		if q := claim.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(fixtures.Quantity("100Gi")) != 0 {
			t.Errorf("claim %d capacity %s", i, q.String())
		}
		if claim.Labels[LabelNode] != n.Name || claim.Labels[LabelCluster] != "gc" {
			t.Errorf("claim %d labels %v: DeleteNodeWorkload selects claims by them", i, claim.Labels)
		}
	}
	wantDevices := []corev1.VolumeDevice{{Name: "brick-0", DevicePath: "/dev/anthill/brick-0"}, {Name: "brick-1", DevicePath: "/dev/anthill/brick-1"}}
	if !slices.Equal(ctr.VolumeDevices, wantDevices) {
		t.Errorf("volume devices %v, want %v", ctr.VolumeDevices, wantDevices)
	}

	terms := pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || !fxHasZone(terms[0], "zone-1") {
		t.Errorf("node affinity terms %+v, want the node's zone", terms)
	}
}

func fxHasZone(term corev1.NodeSelectorTerm, zone string) bool {
	for _, e := range term.MatchExpressions {
		if e.Key == ZoneLabel && e.Operator == corev1.NodeSelectorOpIn && slices.Equal(e.Values, []string{zone}) {
			return true
		}
	}
	return false
}

func TestBuildNodeStatefulSetPlacementAndStorageVariants(t *testing.T) {
	storageNodes := corev1.NodeSelectorRequirement{Key: "storage", Operator: corev1.NodeSelectorOpExists}
	ssd := corev1.NodeSelectorRequirement{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}
	templateAffinity := &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{storageNodes}}, {MatchExpressions: []corev1.NodeSelectorRequirement{ssd}}},
	}}
	dedicated := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "storage", Effect: corev1.TaintEffectNoSchedule}

	tests := []struct {
		name  string
		setup func(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode)
		check func(t *testing.T, pod corev1.PodSpec, claims []corev1.PersistentVolumeClaim)
	}{
		{
			name: "the zone joins every term of the template's node affinity, and its tolerations apply",
			setup: func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
				c.Spec.NodeTemplates[0].NodeAffinity = templateAffinity
				c.Spec.NodeTemplates[0].Tolerations = []corev1.Toleration{dedicated}
			},
			check: func(t *testing.T, pod corev1.PodSpec, _ []corev1.PersistentVolumeClaim) {
				terms := pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				if len(terms) != 2 || !fxHasZone(terms[0], "zone-1") || !fxHasZone(terms[1], "zone-1") {
					t.Errorf("terms %+v", terms)
				}
				if len(templateAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions) != 1 {
					t.Error("the builder modified the template's affinity")
				}
				if !slices.Equal(pod.Tolerations[:1], []corev1.Toleration{dedicated}) {
					t.Errorf("tolerations %+v", pod.Tolerations)
				}
			},
		},
		{
			name: "the node's own affinity wins over its template's",
			setup: func(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) {
				c.Spec.NodeTemplates[0].NodeAffinity = templateAffinity
				n.Spec.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{ssd}}},
				}}
			},
			check: func(t *testing.T, pod corev1.PodSpec, _ []corev1.PersistentVolumeClaim) {
				terms := pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				if len(terms) != 1 || len(terms[0].MatchExpressions) != 2 || terms[0].MatchExpressions[0].Key != "disk" || !fxHasZone(terms[0], "zone-1") {
					t.Errorf("terms %+v", terms)
				}
			},
		},
		{
			name: "host devices are reached through the host's /dev, with no claims, on that host only",
			setup: func(_ *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) {
				n.Spec.Storage = &operatorv1alpha1.NodeStorage{Devices: []string{"/dev/vdb"}, Host: "worker-7"}
				n.Spec.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}},
						{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "rack", Operator: corev1.NodeSelectorOpIn, Values: []string{"r1"}}}},
					},
				}}
			},
			check: func(t *testing.T, pod corev1.PodSpec, claims []corev1.PersistentVolumeClaim) {
				if len(claims) != 0 || len(pod.Containers[0].VolumeDevices) != 0 {
					t.Errorf("claims %d, volume devices %v", len(claims), pod.Containers[0].VolumeDevices)
				}
				// Terms are ORed: the host must be required in each.
				terms := pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				for _, term := range terms {
					pinned := slices.ContainsFunc(term.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool {
						return r.Key == "kubernetes.io/hostname" && r.Operator == corev1.NodeSelectorOpIn && slices.Equal(r.Values, []string{"worker-7"})
					})
					if !pinned || !fxHasZone(term, "zone-1") {
						t.Errorf("term %+v does not require host worker-7 and the zone", term)
					}
				}
				if len(terms) != 2 {
					t.Errorf("terms %+v, want the admin's two", terms)
				}
				found := false
				for _, v := range pod.Volumes {
					found = found || (v.HostPath != nil && v.HostPath.Path == "/dev")
				}
				if !found {
					t.Error("no hostPath /dev volume")
				}
			},
		},
		{
			name: "an admin-supplied auth secret is mounted instead of the generated one",
			setup: func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
				c.Spec.Management = &operatorv1alpha1.ManagementSpec{AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "mine", Key: "token"}}
			},
			check: func(t *testing.T, pod corev1.PodSpec, _ []corev1.PersistentVolumeClaim) {
				for _, v := range pod.Volumes {
					if v.Secret != nil && (v.Secret.SecretName != "mine" || v.Secret.Items[0].Key != "token") {
						t.Errorf("secret volume %+v", v.Secret)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixtures.Cluster("gc")
			n := fixtures.Node("gc", "n1", fixtures.PVCStorage(1))
			tt.setup(c, n)
			sts := NodeStatefulSet(c, n, "4.1.0")
			tt.check(t, sts.Spec.Template.Spec, sts.Spec.VolumeClaimTemplates)
		})
	}
}

func TestBuildClusterInfra(t *testing.T) {
	c := fixtures.Cluster("gc")
	owned := func(t *testing.T, m metav1.ObjectMeta) {
		t.Helper()
		if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "GlusterCluster" || m.OwnerReferences[0].UID != c.UID {
			t.Errorf("%s owner = %+v", m.Name, m.OwnerReferences)
		}
		if m.Namespace != fixtures.Namespace || m.Labels[LabelCluster] != "gc" || m.Labels[LabelManagedBy] != ManagedByAnthill {
			t.Errorf("%s namespace %q labels %v", m.Name, m.Namespace, m.Labels)
		}
	}
	gd2Pods := map[string]string{LabelCluster: "gc", LabelComponent: ComponentGlusterNode}

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"the headless Service names every node pod, ready or not", func(t *testing.T) {
			s := HeadlessService(c)
			owned(t, s.ObjectMeta)
			if s.Name != "gc-nodes" || s.Spec.ClusterIP != corev1.ClusterIPNone || !s.Spec.PublishNotReadyAddresses {
				t.Errorf("%+v", s.Spec)
			}
			if len(s.Spec.Selector) != len(gd2Pods) || s.Spec.Selector[LabelComponent] != ComponentGlusterNode || s.Spec.Selector[LabelCluster] != "gc" {
				t.Errorf("selector %v", s.Spec.Selector)
			}
		}},
		{"the management Service is a ClusterIP on 24007 over the cluster's gluster-node pods", func(t *testing.T) {
			s := ManagementService(c)
			owned(t, s.ObjectMeta)
			if s.Name != "gc-mgmt" || s.Spec.Type != corev1.ServiceTypeClusterIP || len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 24007 {
				t.Errorf("%+v", s.Spec)
			}
			if s.Spec.Selector[LabelComponent] != ComponentGlusterNode || s.Spec.Selector[LabelCluster] != "gc" {
				t.Errorf("selector %v", s.Spec.Selector)
			}
		}},
		{"the auth Secret holds the value under key secret", func(t *testing.T) {
			s := AuthSecret(c, "ab")
			owned(t, s.ObjectMeta)
			if s.Name != "gc-gd2-auth" || string(s.Data["secret"]) != "ab" {
				t.Errorf("%s %v", s.Name, s.Data)
			}
		}},
		{"etcd is one replica of the pinned image on 2379 with a small retained claim", func(t *testing.T) {
			svc, sts := EtcdService(c), EtcdStatefulSet(c)
			owned(t, svc.ObjectMeta)
			owned(t, sts.ObjectMeta)
			if svc.Name != "gc-etcd" || sts.Name != "gc-etcd" || sts.Spec.ServiceName != "gc-etcd" || *sts.Spec.Replicas != 1 {
				t.Errorf("names %s %s %s", svc.Name, sts.Name, sts.Spec.ServiceName)
			}
			for k, v := range sts.Spec.Selector.MatchLabels {
				if sts.Spec.Template.Labels[k] != v || svc.Spec.Selector[k] != v {
					t.Errorf("selector %s=%s does not match the pod or the Service", k, v)
				}
			}
			ctr := sts.Spec.Template.Spec.Containers[0]
			if ctr.Image != DefaultImages.Etcd || !slices.Contains(ctr.Command, "--listen-client-urls=http://0.0.0.0:2379") {
				t.Errorf("container %s %v", ctr.Image, ctr.Command)
			}
			if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != EtcdDataClaimTemplate {
				t.Errorf("claims %+v", sts.Spec.VolumeClaimTemplates)
			}
			if sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != "Retain" {
				t.Error("etcd's claim must be deleted explicitly, not by the StatefulSet controller")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

// The template revision moves with everything the template puts in the
// pod and with nothing else: not with the version, which is compared apart.
func TestNodeTemplateRevisionFollowsThePodTemplate(t *testing.T) {
	base := fixtures.Cluster("gc")
	base.Spec.NodeTemplates = []operatorv1alpha1.NodeTemplate{{Name: "z1", Zone: "zone-1"}}
	n := fixtures.Node("gc", "gc-z1-aaaaa", fixtures.PVCStorage(1))
	n.Spec.Template = "z1"
	rev := NodeTemplateRevision(base, n)
	if rev == "" || NodeTemplateRevision(base.DeepCopy(), n.DeepCopy()) != rev {
		t.Fatalf("revision %q is not stable", rev)
	}
	sts := NodeStatefulSet(base, n, "4.1.0")
	if got := sts.Spec.Template.Annotations[AnnotationRevision]; got != rev {
		t.Errorf("the StatefulSet's template carries revision %q, want %q", got, rev)
	}

	same := map[string]func(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode){
		"a version change": func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
			c.Spec.Gluster.Version = "4.1.1"
		},
		"a count change": func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
			c.Spec.NodeTemplates[0].Nodes = ptr.To[int32](5)
		},
	}
	changed := map[string]func(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode){
		"an image change": func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
			c.Spec.Gluster.Image = "registry.example/gd2"
		},
		"template tolerations": func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
			c.Spec.NodeTemplates[0].Tolerations = []corev1.Toleration{{Key: "storage", Operator: corev1.TolerationOpExists}}
		},
		"template affinity": func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
			c.Spec.NodeTemplates[0].NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpExists}}}},
			}}
		},
		"template resources": func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
			c.Spec.NodeTemplates[0].Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: fixtures.Quantity("2Gi")}}
		},
		"template env": func(c *operatorv1alpha1.GlusterCluster, _ *operatorv1alpha1.GlusterNode) {
			c.Spec.NodeTemplates[0].Env = []corev1.EnvVar{{Name: "GLUSTER_LOG_LEVEL", Value: "DEBUG"}}
		},
		"the node's own tolerations": func(_ *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) {
			n.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		},
	}
	for name, mutate := range same {
		c, nn := base.DeepCopy(), n.DeepCopy()
		mutate(c, nn)
		if got := NodeTemplateRevision(c, nn); got != rev {
			t.Errorf("%s changed the revision (%s -> %s)", name, rev, got)
		}
	}
	for name, mutate := range changed {
		c, nn := base.DeepCopy(), n.DeepCopy()
		mutate(c, nn)
		if got := NodeTemplateRevision(c, nn); got == rev {
			t.Errorf("%s left the revision at %s", name, rev)
		}
	}

	c := base.DeepCopy()
	c.Spec.NodeTemplates[0].Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: fixtures.Quantity("2")}}
	c.Spec.NodeTemplates[0].Env = []corev1.EnvVar{{Name: "GLUSTER_LOG_LEVEL", Value: "DEBUG"}}
	ctr := NodeStatefulSet(c, n, "4.1.0").Spec.Template.Spec.Containers[0]
	if q := ctr.Resources.Limits[corev1.ResourceCPU]; q.String() != "2" || fxEnv(ctr, "GLUSTER_LOG_LEVEL") != "DEBUG" || fxEnv(ctr, "GD2_RESTAUTH") != "true" {
		t.Errorf("the template's resources and env are not in the container (limits %v, env %v)", ctr.Resources.Limits, ctr.Env)
	}
	ext := n.DeepCopy()
	ext.Spec.ExternalAddress = "10.0.0.9"
	if got := NodeTemplateRevision(base, ext); got != "" {
		t.Errorf("a node with an external address runs no pod but has revision %q", got)
	}
}

// TestClusterNodeFactsStaleTemplate: a node is stale when the revision its
// ready pod last ran differs from the one the spec gives it now, or when
// it is past joining with none recorded; a node still joining with none
// (a new one, created from the current template) is not, so a new
// cluster or a scale-up starts no rollout.
func TestClusterNodeFactsStaleTemplate(t *testing.T) {
	c := fixtures.Cluster("gc")
	c.Spec.NodeTemplates = []operatorv1alpha1.NodeTemplate{{Name: "z1", Zone: "zone-1"}}
	node := func(name, state, revision string) *operatorv1alpha1.GlusterNode {
		n := fixtures.Node("gc", name, fixtures.PVCStorage(1))
		n.Spec.Template = "z1"
		n.Status.State, n.Status.Revision = state, revision
		return n
	}
	cur := node("gc-z1-current", "Online", "")
	cur.Status.Revision = NodeTemplateRevision(c, cur)
	facts := ClusterNodeFacts([]*operatorv1alpha1.GlusterNode{
		node("gc-z1-new", "Provisioning", ""), node("gc-z1-pending", "", ""), cur,
		node("gc-z1-old", "Online", "0ld"), node("gc-z1-unrecorded", "Online", ""),
	}, c)
	got := map[string]bool{}
	for _, f := range facts {
		got[f.Name] = f.StaleTemplate
	}
	want := map[string]bool{"gc-z1-new": false, "gc-z1-pending": false, "gc-z1-current": false, "gc-z1-old": true, "gc-z1-unrecorded": true}
	if !maps.Equal(got, want) {
		t.Errorf("stale = %v, want %v", got, want)
	}
}
