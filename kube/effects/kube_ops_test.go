package effects

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

type fxKube struct {
	ops  *Kube
	kube *k8sfake.Clientset
	crs  *anthillfake.Clientset
}

func newFxKube(t *testing.T, kubeObjs []runtime.Object, crObjs ...runtime.Object) *fxKube {
	t.Helper()
	f := &fxKube{
		kube: k8sfake.NewClientset(kubeObjs...),
		crs:  anthillfake.NewSimpleClientset(crObjs...),
	}
	n := 0
	f.ops = &Kube{Client: f.kube, Anthill: f.crs, NameSuffix: func() string {
		n++
		return fmt.Sprintf("s%04d", n)
	}}
	return f
}

func fxNodeTarget(n *operatorv1alpha1.GlusterNode) transitions.NodeTarget {
	return transitions.NodeTarget{Namespace: n.Namespace, Name: n.Name, Cluster: n.Spec.Cluster, Zone: n.Spec.Zone, Devices: objects.NodeDevicePaths(n)}
}

func (f *fxKube) secrets(t *testing.T) []corev1.Secret {
	t.Helper()
	l, err := f.kube.CoreV1().Secrets(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (f *fxKube) names(t *testing.T, kind string) []string {
	t.Helper()
	var out []string
	switch kind {
	case "services":
		l, err := f.kube.CoreV1().Services(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case "statefulsets":
		l, err := f.kube.AppsV1().StatefulSets(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case "pvcs":
		l, err := f.kube.CoreV1().PersistentVolumeClaims(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case "pods":
		l, err := f.kube.CoreV1().Pods(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case "secrets":
		for _, s := range f.secrets(t) {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

func (f *fxKube) nodes(t *testing.T) []operatorv1alpha1.GlusterNode {
	t.Helper()
	l, err := f.crs.OperatorV1alpha1().GlusterNodes(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(l.Items, func(a, b operatorv1alpha1.GlusterNode) int { return strings.Compare(a.Name, b.Name) })
	return l.Items
}

func TestKubeOpsEnsureClusterInfraIsIdempotentAndKeepsTheSecret(t *testing.T) {
	c := fixtures.Cluster("gc")
	f := newFxKube(t, nil, c)

	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "first ensure")
	first := f.secrets(t)
	if len(first) != 1 || first[0].Name != "gc-gd2-auth" || len(first[0].Data[objects.AuthSecretKey]) != 64 {
		t.Fatalf("secrets after first ensure: %+v", first)
	}
	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "second ensure")
	second := f.secrets(t)
	if len(second) != 1 || string(second[0].Data[objects.AuthSecretKey]) != string(first[0].Data[objects.AuthSecretKey]) {
		t.Fatal("a repeated ensure regenerated the auth secret")
	}
	if got, want := f.names(t, "services"), []string{"gc-etcd", "gc-mgmt", "gc-nodes"}; !slices.Equal(got, want) {
		t.Errorf("services %v, want %v", got, want)
	}
	if got, want := f.names(t, "statefulsets"), []string{"gc-etcd"}; !slices.Equal(got, want) {
		t.Errorf("statefulsets %v, want %v", got, want)
	}
}

func TestKubeOpsEnsureClusterInfraNeverReplacesAnExistingSecret(t *testing.T) {
	c := fixtures.Cluster("gc")
	existing := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "gc-gd2-auth", Namespace: fixtures.Namespace},
		Data:       map[string][]byte{objects.AuthSecretKey: []byte("the-one-the-nodes-started-with")},
	}
	f := newFxKube(t, []runtime.Object{existing}, c)
	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "ensure")
	for _, a := range f.kube.Actions() {
		if a.GetResource().Resource == "secrets" && a.GetVerb() != "get" {
			t.Errorf("unexpected %s on secrets", a.GetVerb())
		}
	}
	s := f.secrets(t)
	if len(s) != 1 || string(s[0].Data[objects.AuthSecretKey]) != "the-one-the-nodes-started-with" {
		t.Fatalf("existing secret changed: %+v", s)
	}
}

func TestKubeOpsEnsureClusterInfraVariants(t *testing.T) {
	tests := []struct {
		name                  string
		mutate                func(c *operatorv1alpha1.GlusterCluster)
		wantSecrets, wantSvcs []string
		wantStatefulSets      []string
	}{
		{
			name: "an external cluster gets only its management Service: no secret, no etcd, no headless Service",
			mutate: func(c *operatorv1alpha1.GlusterCluster) {
				c.Spec.Mode = operatorv1alpha1.ClusterModeExternal
				c.Spec.NodeTemplates = nil
				c.Spec.External = &operatorv1alpha1.ExternalSpec{Nodes: []operatorv1alpha1.ExternalNode{{Address: "192.0.2.1"}}}
			},
			wantSvcs: []string{"gc-mgmt"},
		},
		{
			name: "an admin-supplied auth secret means anthill creates none",
			mutate: func(c *operatorv1alpha1.GlusterCluster) {
				c.Spec.Management = &operatorv1alpha1.ManagementSpec{AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "mine"}}
			},
			wantSvcs:         []string{"gc-etcd", "gc-mgmt", "gc-nodes"},
			wantStatefulSets: []string{"gc-etcd"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixtures.Cluster("gc")
			tt.mutate(c)
			f := newFxKube(t, nil, c)
			fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "ensure")
			if got := f.names(t, "secrets"); !slices.Equal(got, tt.wantSecrets) {
				t.Errorf("secrets %v, want %v", got, tt.wantSecrets)
			}
			if got := f.names(t, "services"); !slices.Equal(got, tt.wantSvcs) {
				t.Errorf("services %v, want %v", got, tt.wantSvcs)
			}
			if got := f.names(t, "statefulsets"); !slices.Equal(got, tt.wantStatefulSets) {
				t.Errorf("statefulsets %v, want %v", got, tt.wantStatefulSets)
			}
		})
	}
}

func TestKubeOpsDeleteClusterInfraIsIdempotentAndSparesTheAdminsSecret(t *testing.T) {
	c := fixtures.Cluster("gc")
	f := newFxKube(t, nil, c)
	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "ensure")
	etcdClaim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: objects.EtcdDataClaimName("gc"), Namespace: fixtures.Namespace, Labels: objects.ClusterLabels("gc", objects.ComponentEtcd)}}
	other := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: fixtures.Namespace}}
	for _, pvc := range []*corev1.PersistentVolumeClaim{etcdClaim, other} {
		_, err := f.kube.CoreV1().PersistentVolumeClaims(fixtures.Namespace).Create(fixtures.Ctx, pvc, metav1.CreateOptions{})
		fixtures.Must(t, err, "create PVC")
	}
	for i := range 2 {
		fixtures.Must(t, f.ops.DeleteClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), fmt.Sprintf("delete #%d", i+1))
	}
	if got := f.names(t, "services"); len(got) != 0 {
		t.Errorf("services left: %v", got)
	}
	if got := f.names(t, "statefulsets"); len(got) != 0 {
		t.Errorf("statefulsets left: %v", got)
	}
	if got := f.names(t, "secrets"); len(got) != 0 {
		t.Errorf("secrets left: %v", got)
	}
	if got := f.names(t, "pvcs"); !slices.Equal(got, []string{"unrelated"}) {
		t.Errorf("PVCs left: %v", got)
	}

	admins := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gc-gd2-auth", Namespace: fixtures.Namespace}}
	_, err := f.kube.CoreV1().Secrets(fixtures.Namespace).Create(fixtures.Ctx, admins, metav1.CreateOptions{})
	fixtures.Must(t, err, "create admin secret")
	fixtures.Must(t, f.ops.DeleteClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "delete with admin secret")
	if got := f.names(t, "secrets"); !slices.Equal(got, []string{"gc-gd2-auth"}) {
		t.Errorf("an admin's secret that anthill did not create was deleted: %v", got)
	}
}

func TestKubeOpsEnsureNodeWorkloadIsIdempotent(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "gc-z1-aaaaa", fixtures.PVCStorage(2))
	ext := fixtures.Node("gc", "ext", nil)
	ext.Spec.ExternalAddress = "10.0.0.9"
	f := newFxKube(t, nil, c, n, ext)

	for i := range 2 {
		fixtures.Must(t, f.ops.EnsureNodeWorkload(fixtures.Ctx, fxNodeTarget(n)), fmt.Sprintf("ensure #%d", i+1))
		fixtures.Must(t, f.ops.EnsureNodeWorkload(fixtures.Ctx, fxNodeTarget(ext)), "ensure external")
	}
	if got := f.names(t, "statefulsets"); !slices.Equal(got, []string{"gc-z1-aaaaa"}) {
		t.Fatalf("statefulsets %v", got)
	}
	sts, err := f.kube.AppsV1().StatefulSets(fixtures.Namespace).Get(fixtures.Ctx, "gc-z1-aaaaa", metav1.GetOptions{})
	fixtures.Must(t, err, "get sts")
	if sts.Spec.Template.Annotations[objects.AnnotationVersion] != "4.1.0" || len(sts.Spec.VolumeClaimTemplates) != 3 {
		t.Errorf("sts not built from the live cluster and node: %+v", sts.Spec.Template.Annotations)
	}
}

func TestKubeOpsRollNodeWorkloadRestartsOnlyAnOldPod(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "n1", fixtures.PVCStorage(1))
	f := newFxKube(t, nil, c, n)
	fixtures.Must(t, f.ops.EnsureNodeWorkload(fixtures.Ctx, fxNodeTarget(n)), "ensure")
	oldPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "n1-0", Namespace: fixtures.Namespace, UID: "old",
		Annotations: map[string]string{objects.AnnotationVersion: "4.1.0"}}}
	_, err := f.kube.CoreV1().Pods(fixtures.Namespace).Create(fixtures.Ctx, oldPod, metav1.CreateOptions{})
	fixtures.Must(t, err, "create pod")

	nt := fxNodeTarget(n)
	fixtures.Must(t, f.ops.RollNodeWorkload(fixtures.Ctx, nt, "4.1.1"), "roll")
	sts, err := f.kube.AppsV1().StatefulSets(fixtures.Namespace).Get(fixtures.Ctx, "n1", metav1.GetOptions{})
	fixtures.Must(t, err, "get sts")
	if sts.Spec.Template.Annotations[objects.AnnotationVersion] != "4.1.1" || sts.Spec.Template.Spec.Containers[0].Image != "quay.io/gluster/gd2:4.1.1" {
		t.Errorf("template not rolled: %v %s", sts.Spec.Template.Annotations, sts.Spec.Template.Spec.Containers[0].Image)
	}
	if got := f.names(t, "pods"); len(got) != 0 {
		t.Fatalf("the pod at the old version was not deleted: %v", got)
	}

	// Repeated while the pod is gone: nothing to do.
	fixtures.Must(t, f.ops.RollNodeWorkload(fixtures.Ctx, nt, "4.1.1"), "roll while pod is gone")

	// The StatefulSet controller brings the pod back at the new version; a
	// repeated roll must not restart it again.
	newPod := oldPod.DeepCopy()
	newPod.UID, newPod.Annotations[objects.AnnotationVersion] = "new", "4.1.1"
	newPod.Annotations[objects.AnnotationRevision] = objects.NodeTemplateRevision(c, n)
	_, err = f.kube.CoreV1().Pods(fixtures.Namespace).Create(fixtures.Ctx, newPod, metav1.CreateOptions{})
	fixtures.Must(t, err, "create new pod")
	f.kube.ClearActions()
	fixtures.Must(t, f.ops.RollNodeWorkload(fixtures.Ctx, nt, "4.1.1"), "repeated roll")
	if got := f.names(t, "pods"); !slices.Equal(got, []string{"n1-0"}) {
		t.Fatalf("the pod at the target version was deleted: %v", got)
	}
	for _, a := range f.kube.Actions() {
		if v := a.GetVerb(); v == "update" || v == "delete" {
			t.Errorf("repeated roll did %s on %s", v, a.GetResource().Resource)
		}
	}
}

func TestKubeOpsDeleteNodeWorkloadRemovesOnlyTheNodesObjects(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "n1", fixtures.PVCStorage(2))
	labelled := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "brick-0-n1-0", Namespace: fixtures.Namespace, Labels: objects.NodeLabels("gc", "n1")}}
	unlabelled := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "brick-1-n1-0", Namespace: fixtures.Namespace}}
	otherNode := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "brick-0-n2-0", Namespace: fixtures.Namespace, Labels: objects.NodeLabels("gc", "n2")}}
	f := newFxKube(t, []runtime.Object{labelled, unlabelled, otherNode}, c, n)
	fixtures.Must(t, f.ops.EnsureNodeWorkload(fixtures.Ctx, fxNodeTarget(n)), "ensure")

	for i := range 2 {
		fixtures.Must(t, f.ops.DeleteNodeWorkload(fixtures.Ctx, fxNodeTarget(n)), fmt.Sprintf("delete #%d", i+1))
	}
	if got := f.names(t, "statefulsets"); len(got) != 0 {
		t.Errorf("statefulsets left: %v", got)
	}
	if got := f.names(t, "pvcs"); !slices.Equal(got, []string{"brick-0-n2-0"}) {
		t.Errorf("PVCs left: %v, want only the other node's", got)
	}
}

// fxScaleCluster is a manual cluster with templates z1 (zone-1) and z2
// (zone-2).
func fxScaleCluster(z1, z2 int32) *operatorv1alpha1.GlusterCluster {
	c := fixtures.Cluster("gc")
	c.Spec.NodeTemplates = []operatorv1alpha1.NodeTemplate{
		{Name: "z1", Zone: "zone-1", Nodes: ptr.To(z1), Storage: operatorv1alpha1.TemplateStorage{Capacity: fixtures.Quantity("100Gi"), DeviceCount: 2, StorageClassName: ptr.To("fast")}},
		{Name: "z2", Zone: "zone-2", Nodes: ptr.To(z2), Storage: operatorv1alpha1.TemplateStorage{Capacity: fixtures.Quantity("50Gi")}},
	}
	return c
}

func fxMember(name, template, state string, age time.Duration) *operatorv1alpha1.GlusterNode {
	zone := map[string]string{"z1": "zone-1", "z2": "zone-2"}[template]
	return &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fixtures.Namespace,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-age))},
		Spec:   operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: zone, Template: template},
		Status: operatorv1alpha1.GlusterNodeStatus{State: state},
	}
}

func fxDecommissioned(nodes []operatorv1alpha1.GlusterNode) []string {
	var out []string
	for _, n := range nodes {
		if n.Annotations[objects.AnnotationRequest] == objects.RequestDecommission {
			out = append(out, n.Name)
		}
	}
	return out
}

func TestKubeOpsScaleNodesUpCreatesPerTemplateAndIsIdempotent(t *testing.T) {
	c := fxScaleCluster(2, 1)
	f := newFxKube(t, nil, c)
	for i := range 2 {
		fixtures.Must(t, f.ops.ScaleNodes(fixtures.Ctx, fxScaleTarget(t, f.ops, c), 3), fmt.Sprintf("scale #%d", i+1))
	}
	nodes := f.nodes(t)
	// Nodes are created concurrently, so which suffix each drew varies;
	// the names per template and their number do not.
	var names, templates []string
	for _, n := range nodes {
		names = append(names, n.Name)
		templates = append(templates, strings.TrimSuffix(n.Name, n.Name[strings.LastIndex(n.Name, "-"):]))
	}
	if want := []string{"gc-z1", "gc-z1", "gc-z2"}; !slices.Equal(templates, want) {
		t.Fatalf("nodes %v, want two of z1 and one of z2", names)
	}
	n := nodes[0]
	if n.Spec.Cluster != "gc" || n.Spec.Zone != "zone-1" || n.Spec.Template != "z1" || n.Spec.DesiredState != operatorv1alpha1.NodeEnabled {
		t.Errorf("spec %+v", n.Spec)
	}
	s := n.Spec.Storage
	if s == nil || s.Capacity.Cmp(fixtures.Quantity("100Gi")) != 0 || ptr.Deref(s.DeviceCount, 0) != 2 || ptr.Deref(s.StorageClassName, "") != "fast" {
		t.Errorf("storage %+v", s)
	}
	if z2 := nodes[2].Spec.Storage; ptr.Deref(z2.DeviceCount, 0) != 1 || z2.StorageClassName != nil {
		t.Errorf("z2 storage %+v: deviceCount defaults to 1, no class means the default class", z2)
	}
	if !slices.Contains(n.Finalizers, objects.FinalizerNode) || n.Labels[objects.LabelCluster] != "gc" {
		t.Errorf("finalizers %v labels %v", n.Finalizers, n.Labels)
	}
}

func TestKubeOpsScaleNodesRandomSuffixIsFiveLowercaseAlphanumerics(t *testing.T) {
	c := fxScaleCluster(1, 0)
	f := newFxKube(t, nil, c)
	f.ops.NameSuffix = nil
	fixtures.Must(t, f.ops.ScaleNodes(fixtures.Ctx, fxScaleTarget(t, f.ops, c), 1), "scale")
	nodes := f.nodes(t)
	if len(nodes) != 1 {
		t.Fatalf("%d nodes", len(nodes))
	}
	suffix := strings.TrimPrefix(nodes[0].Name, "gc-z1-")
	if len(suffix) != 5 || strings.Trim(suffix, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		t.Errorf("name %q", nodes[0].Name)
	}
}

func TestKubeOpsScaleNodesChoice(t *testing.T) {
	tests := []struct {
		name               string
		cluster            *operatorv1alpha1.GlusterCluster
		existing           []*operatorv1alpha1.GlusterNode
		wantDecommissioned []string
		wantCreated        int
	}{
		{
			name:    "scale-down takes nodes that never reached Online first, then the newest",
			cluster: fxScaleCluster(1, 1),
			existing: []*operatorv1alpha1.GlusterNode{
				fxMember("old-online", "z1", "Online", 3*time.Hour),
				fxMember("new-online", "z1", "Online", time.Hour),
				fxMember("oldest-joining", "z1", "Joining", 5*time.Hour),
				fxMember("z2-online", "z2", "Online", time.Hour),
			},
			wantDecommissioned: []string{"new-online", "oldest-joining"},
		},
		{
			name:    "leaving nodes do not count, so a replacement is created",
			cluster: fxScaleCluster(1, 1),
			existing: []*operatorv1alpha1.GlusterNode{
				fxMember("draining", "z1", "Draining", 3*time.Hour),
				fxMember("z2-online", "z2", "Online", time.Hour),
			},
			wantCreated: 1,
		},
		{
			name:    "a failed node that recovered makes its replacement the surplus, before it takes bricks",
			cluster: fxScaleCluster(1, 1),
			existing: []*operatorv1alpha1.GlusterNode{
				fxMember("recovered", "z1", "Online", 3*time.Hour),
				fxMember("replacement", "z1", "Joining", time.Minute),
				fxMember("z2-online", "z2", "Online", time.Hour),
			},
			wantDecommissioned: []string{"replacement"},
		},
		{
			name:    "a node already asked to decommission is not asked again and does not count",
			cluster: fxScaleCluster(1, 1),
			existing: []*operatorv1alpha1.GlusterNode{
				func() *operatorv1alpha1.GlusterNode {
					n := fxMember("asked", "z1", "Online", time.Hour)
					n.Annotations = map[string]string{objects.AnnotationRequest: objects.RequestDecommission}
					return n
				}(),
				fxMember("kept", "z1", "Online", 2*time.Hour),
				fxMember("z2-online", "z2", "Online", time.Hour),
			},
			wantDecommissioned: []string{"asked"},
		},
		{
			name:    "a node of a template that left the spec, or made by hand, is never removed",
			cluster: fxScaleCluster(0, 1),
			existing: []*operatorv1alpha1.GlusterNode{
				fxMember("orphan", "gone", "Online", time.Hour),
				fxMember("by-hand", "", "Online", time.Hour),
				fxMember("z2-online", "z2", "Online", time.Hour),
			},
		},
		{
			name:    "nodes of another cluster are neither counted nor touched",
			cluster: fxScaleCluster(1, 0),
			existing: []*operatorv1alpha1.GlusterNode{
				func() *operatorv1alpha1.GlusterNode {
					n := fxMember("other", "z1", "Online", time.Hour)
					n.Spec.Cluster = "other"
					return n
				}(),
			},
			wantCreated: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []runtime.Object{tt.cluster}
			for _, n := range tt.existing {
				objs = append(objs, n)
			}
			f := newFxKube(t, nil, objs...)
			for i := range 2 {
				fixtures.Must(t, f.ops.ScaleNodes(fixtures.Ctx, fxScaleTarget(t, f.ops, tt.cluster), 0), fmt.Sprintf("scale #%d", i+1))
			}
			nodes := f.nodes(t)
			if got := fxDecommissioned(nodes); !slices.Equal(got, tt.wantDecommissioned) {
				t.Errorf("decommissioned %v, want %v", got, tt.wantDecommissioned)
			}
			if got := len(nodes) - len(tt.existing); got != tt.wantCreated {
				t.Errorf("created %d nodes, want %d", got, tt.wantCreated)
			}
		})
	}
}

// The targets themselves are states.TemplateTargets; this checks that
// ScaleNodes hands it the mode, each template's bounds and the counts the
// autoscaler recorded in the live status (not the total it is given).
func TestKubeOpsScaleNodesAutomaticFollowsTheRecordedCountsWithinBounds(t *testing.T) {
	c := fxScaleCluster(0, 0)
	c.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
	z1, z2 := &c.Spec.NodeTemplates[0], &c.Spec.NodeTemplates[1]
	z1.Nodes, z1.MinNodes, z1.MaxNodes = nil, ptr.To[int32](1), ptr.To[int32](1)
	z2.Nodes, z2.MinNodes, z2.MaxNodes = nil, ptr.To[int32](1), ptr.To[int32](5)
	c.Status.Autoscaling = &operatorv1alpha1.AutoscalingStatus{Templates: []operatorv1alpha1.TemplateAutoscalingStatus{
		{Name: z1.Name, Desired: 3}, {Name: z2.Name, Desired: 2},
	}}
	f := newFxKube(t, nil, c)
	fixtures.Must(t, f.ops.ScaleNodes(fixtures.Ctx, fxScaleTarget(t, f.ops, c), 9), "scale")
	per := map[string]int{}
	for _, n := range f.nodes(t) {
		per[n.Spec.Template]++
	}
	if per[z1.Name] != 1 || per[z2.Name] != 2 {
		t.Errorf("nodes per template %v, want %s at its maximum of 1 and %s at its recorded 2", per, z1.Name, z2.Name)
	}
}

func TestKubeOpsDeleteNodesIsIdempotent(t *testing.T) {
	c := fxScaleCluster(1, 1)
	other := fxMember("other", "z1", "Online", time.Hour)
	other.Spec.Cluster = "other"
	f := newFxKube(t, nil, c, fxMember("a", "z1", "Online", time.Hour), fxMember("b", "z2", "Online", time.Hour), other)
	for i := range 2 {
		fixtures.Must(t, f.ops.DeleteNodes(fixtures.Ctx, fixtures.ClusterTarget(c)), fmt.Sprintf("delete #%d", i+1))
	}
	nodes := f.nodes(t)
	if len(nodes) != 1 || nodes[0].Name != "other" {
		t.Errorf("nodes left %+v", nodes)
	}
}

func TestKubeOpsDeleteNodesOneAtATime(t *testing.T) {
	c := fxScaleCluster(1, 1)
	leaving := fxMember("a", "z1", "Draining", time.Hour)
	leaving.DeletionTimestamp = ptr.To(metav1.Now())
	leaving.Finalizers = []string{objects.FinalizerNode}
	f := newFxKube(t, nil, c, leaving, fxMember("b", "z2", "Online", time.Hour))
	fixtures.Must(t, f.ops.DeleteNodes(fixtures.Ctx, fixtures.ClusterTarget(c)), "delete")
	for _, a := range f.crs.Actions() {
		if a.GetVerb() == "delete" {
			t.Errorf("a node was deleted while another is still leaving: %v", a)
		}
	}
	if nodes := f.nodes(t); len(nodes) != 2 || !slices.Contains(nodes[0].Finalizers, objects.FinalizerNode) {
		t.Errorf("nodes %+v, want both, the leaving one still held", nodes)
	}
}

// The last node leaves through its own machine (Detaching -> Deleting with
// reason LastPeer); DeleteNodes never deletes a leaving node's workload.
func TestKubeOpsDeleteNodesLeavesTheLastLeavingNodeToItsMachine(t *testing.T) {
	c := fixtures.Cluster("gc")
	last := fixtures.Node("gc", "n1", fixtures.PVCStorage(1))
	last.DeletionTimestamp = ptr.To(metav1.Now())
	last.Finalizers = []string{objects.FinalizerNode}
	last.Status.State = "Detaching"
	f := newFxKube(t, nil, c, last)
	fixtures.Must(t, f.ops.EnsureNodeWorkload(fixtures.Ctx, fxNodeTarget(last)), "ensure")
	fixtures.Must(t, f.ops.DeleteNodes(fixtures.Ctx, fixtures.ClusterTarget(c)), "delete")
	if got := f.names(t, "statefulsets"); len(got) != 1 {
		t.Errorf("a leaving node's workload was touched: statefulsets %v", got)
	}
	if nodes := f.nodes(t); len(nodes) != 1 || !slices.Contains(nodes[0].Finalizers, objects.FinalizerNode) {
		t.Errorf("nodes %+v", nodes)
	}
}

func TestKubeOpsSetCSIVersion(t *testing.T) {
	c := fixtures.Cluster("gc")
	c.Spec.CSI = &operatorv1alpha1.CSISpec{FileImage: "quay.io/gluster/csi-file", Version: "4.1.0"}

	t.Run("no CSI DaemonSet is success", func(t *testing.T) {
		f := newFxKube(t, nil, c)
		fixtures.Must(t, f.ops.SetCSIVersion(fixtures.Ctx, fixtures.ClusterTarget(c), "4.1.1"), "set")
	})

	t.Run("the DaemonSet is set once and a repeat writes nothing", func(t *testing.T) {
		ds := objects.CSINodeDaemonSet(c, operatorv1alpha1.GlusterDriverFile, "4.1.0")
		f := newFxKube(t, []runtime.Object{ds}, c)
		fixtures.Must(t, f.ops.SetCSIVersion(fixtures.Ctx, fixtures.ClusterTarget(c), "4.1.1"), "set")
		got, err := f.kube.AppsV1().DaemonSets(fixtures.Namespace).Get(fixtures.Ctx, ds.Name, metav1.GetOptions{})
		fixtures.Must(t, err, "get ds")
		want := objects.ContainerImages(objects.CSINodeDaemonSet(c, operatorv1alpha1.GlusterDriverFile, "4.1.1").Spec.Template.Spec)
		if got.Spec.Template.Annotations[objects.AnnotationVersion] != "4.1.1" || !maps.Equal(objects.ContainerImages(got.Spec.Template.Spec), want) ||
			!slices.Contains(slices.Collect(maps.Values(want)), "quay.io/gluster/csi-file:4.1.1") {
			t.Errorf("daemonset %v %v, want images %v", got.Spec.Template.Annotations, objects.ContainerImages(got.Spec.Template.Spec), want)
		}
		f.kube.ClearActions()
		fixtures.Must(t, f.ops.SetCSIVersion(fixtures.Ctx, fixtures.ClusterTarget(c), "4.1.1"), "repeat")
		for _, a := range f.kube.Actions() {
			if a.GetVerb() != "get" && a.GetVerb() != "list" {
				t.Errorf("repeat did %s", a.GetVerb())
			}
		}
	})

	t.Run("a changed image tag reaches the DaemonSet and the controller at the same version", func(t *testing.T) {
		ds := objects.CSINodeDaemonSet(c, operatorv1alpha1.GlusterDriverFile, "4.1.0")
		ctl := objects.CSIControllerDeployment(c, operatorv1alpha1.GlusterDriverFile, "4.1.0")
		pinned := c.DeepCopy()
		pinned.Spec.CSI.FileImage = "quay.io/gluster/csi-file:4.1.0-fix1"
		f := newFxKube(t, []runtime.Object{ds, ctl}, pinned)
		fixtures.Must(t, f.ops.SetCSIVersion(fixtures.Ctx, fixtures.ClusterTarget(pinned), "4.1.0"), "set")
		gotDS, err := f.kube.AppsV1().DaemonSets(fixtures.Namespace).Get(fixtures.Ctx, ds.Name, metav1.GetOptions{})
		fixtures.Must(t, err, "get ds")
		gotCtl, err := f.kube.AppsV1().Deployments(fixtures.Namespace).Get(fixtures.Ctx, ctl.Name, metav1.GetOptions{})
		fixtures.Must(t, err, "get controller")
		for what, spec := range map[string]corev1.PodSpec{"node plugin": gotDS.Spec.Template.Spec, "controller": gotCtl.Spec.Template.Spec} {
			if !slices.Contains(slices.Collect(maps.Values(objects.ContainerImages(spec))), "quay.io/gluster/csi-file:4.1.0-fix1") {
				t.Errorf("%s runs %v, want the pinned quay.io/gluster/csi-file:4.1.0-fix1", what, objects.ContainerImages(spec))
			}
		}
	})
}

// A changed template at an unchanged version reaches the StatefulSet and
// restarts the pod made from the old one, once.
func TestKubeOpsRollNodeWorkloadRollsAChangedTemplate(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "n1", fixtures.PVCStorage(1))
	f := newFxKube(t, nil, c, n)
	fixtures.Must(t, f.ops.EnsureNodeWorkload(fixtures.Ctx, fxNodeTarget(n)), "ensure")
	sts, err := f.kube.AppsV1().StatefulSets(fixtures.Namespace).Get(fixtures.Ctx, "n1", metav1.GetOptions{})
	fixtures.Must(t, err, "get sts")
	oldPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "n1-0", Namespace: fixtures.Namespace, UID: "old",
		Annotations: maps.Clone(sts.Spec.Template.Annotations)}}
	_, err = f.kube.CoreV1().Pods(fixtures.Namespace).Create(fixtures.Ctx, oldPod, metav1.CreateOptions{})
	fixtures.Must(t, err, "create pod")

	// Unchanged: nothing is written and the pod stays.
	f.kube.ClearActions()
	fixtures.Must(t, f.ops.RollNodeWorkload(fixtures.Ctx, fxNodeTarget(n), "4.1.0"), "roll unchanged")
	for _, a := range f.kube.Actions() {
		if v := a.GetVerb(); v == "update" || v == "delete" {
			t.Fatalf("an unchanged template was rolled: %s %s", v, a.GetResource().Resource)
		}
	}

	tol := corev1.Toleration{Key: "storage", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	c.Spec.NodeTemplates[0].Tolerations = []corev1.Toleration{tol}
	_, err = f.crs.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Update(fixtures.Ctx, c, metav1.UpdateOptions{})
	fixtures.Must(t, err, "update cluster")
	fixtures.Must(t, f.ops.RollNodeWorkload(fixtures.Ctx, fxNodeTarget(n), "4.1.0"), "roll changed")
	sts, err = f.kube.AppsV1().StatefulSets(fixtures.Namespace).Get(fixtures.Ctx, "n1", metav1.GetOptions{})
	fixtures.Must(t, err, "get sts")
	if !slices.Contains(sts.Spec.Template.Spec.Tolerations, tol) ||
		sts.Spec.Template.Annotations[objects.AnnotationRevision] != objects.NodeTemplateRevision(c, n) {
		t.Errorf("the StatefulSet was not set to the new template: tolerations %v, annotations %v", sts.Spec.Template.Spec.Tolerations, sts.Spec.Template.Annotations)
	}
	if got := f.names(t, "pods"); len(got) != 0 {
		t.Errorf("the pod made from the old template was not deleted: %v", got)
	}
}
