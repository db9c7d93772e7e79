package objects

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestTrimForCacheDropsManagedFieldsOnly(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Data:       map[string][]byte{"k": []byte("v")},
	}
	out, err := TrimForCache(s)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Secret)
	if got.ManagedFields != nil || got.Name != "s" || got.Labels["a"] != "b" || string(got.Data["k"]) != "v" {
		t.Errorf("TrimForCache = %+v, want the Secret without managedFields and nothing else changed", got)
	}
	// A tombstone has no object metadata of its own; it passes unchanged.
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/s", Obj: s}
	if out, err := TrimForCache(tomb); err != nil || out.(cache.DeletedFinalStateUnknown).Key != "ns/s" {
		t.Errorf("TrimForCache(tombstone) = %v, %v; want it unchanged", out, err)
	}
}

// A PersistentVolume keeps what tells whose data it holds (its labels, its
// CSI driver) and its claim, class, policy and status; its source's
// details, capacity and node affinity go.
func TestTrimForCacheKeepsOfAPersistentVolumeWhatIsReadFromTheCache(t *testing.T) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{LabelCluster: "gc"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "file.gc.ns.anthill.gluster.org", VolumeHandle: "vol-1", VolumeAttributes: map[string]string{"a": "b"},
			}},
			ClaimRef:                      &corev1.ObjectReference{Namespace: "app", Name: "data"},
			StorageClassName:              "gluster",
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			NodeAffinity:                  &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{}},
			MountOptions:                  []string{"ro"},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	out, err := TrimForCache(pv)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.PersistentVolume)
	want := corev1.PersistentVolumeSpec{
		PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "file.gc.ns.anthill.gluster.org", VolumeHandle: "vol-1"}},
		ClaimRef:                      &corev1.ObjectReference{Namespace: "app", Name: "data"},
		StorageClassName:              "gluster",
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
	}
	if !equality.Semantic.DeepEqual(got.Spec, want) {
		t.Errorf("trimmed spec %+v, want %+v", got.Spec, want)
	}
	if got.ManagedFields != nil || got.Labels[LabelCluster] != "gc" || got.Status.Phase != corev1.VolumeBound {
		t.Errorf("trimmed PV %+v: want its labels and status kept, its managedFields dropped", got)
	}
	local := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}},
	}}
	if out, _ := TrimForCache(local); out.(*corev1.PersistentVolume).Spec.Local != nil {
		t.Error("a local PV kept its source")
	}
}

// A pod keeps what the machines read from the cache (node, tolerations,
// containers' images, claims and host paths, status); the rest of its
// spec goes.
func TestTrimForCacheKeepsOfAPodWhatIsReadFromTheCache(t *testing.T) {
	tol := []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	claim := &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "bricks"}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{AnnotationVersion: "4.1.0"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PodSpec{
			NodeName:    "kube-1",
			Tolerations: tol,
			Containers: []corev1.Container{{Name: ContainerGD2, Image: "gd2:4.1.0", Env: []corev1.EnvVar{{Name: "A", Value: "b"}},
				ReadinessProbe: &corev1.Probe{}, VolumeMounts: []corev1.VolumeMount{{Name: "bricks", MountPath: "/b"}}}},
			InitContainers:     []corev1.Container{{Name: "init", Image: "init:1", Command: []string{"sh"}}},
			ServiceAccountName: "sa",
			Affinity:           &corev1.Affinity{},
			Volumes: []corev1.Volume{
				{Name: "bricks", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: claim}},
				{Name: "dev", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/dev"}}},
				{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	out, err := TrimForCache(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	want := corev1.PodSpec{
		NodeName:       "kube-1",
		Tolerations:    tol,
		Containers:     []corev1.Container{{Name: ContainerGD2, Image: "gd2:4.1.0"}},
		InitContainers: []corev1.Container{{Name: "init", Image: "init:1"}},
		Volumes: []corev1.Volume{
			{Name: "bricks", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: claim}},
			{Name: "dev", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/dev"}}},
		},
	}
	if !equality.Semantic.DeepEqual(got.Spec, want) {
		t.Errorf("trimmed spec %+v, want %+v", got.Spec, want)
	}
	if got.ManagedFields != nil || got.Annotations[AnnotationVersion] != "4.1.0" || !PodReady(got) {
		t.Errorf("trimmed pod %+v: want its metadata and status kept, its managedFields dropped", got)
	}
	if images := ContainerImages(got.Spec); images[ContainerGD2] != "gd2:4.1.0" {
		t.Errorf("ContainerImages of the trimmed pod = %v", images)
	}
}

// A StatefulSet keeps its metadata, replica count and status (the etcd
// one's ready replicas); its pod and claim templates go.
func TestTrimForCacheKeepsOfAStatefulSetItsReplicasAndStatus(t *testing.T) {
	one := int32(1)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "gc-etcd", Labels: map[string]string{LabelCluster: "gc"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:             &one,
			ServiceName:          "gc-etcd",
			Template:             corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "etcd:3"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
		},
		Status: appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1},
	}
	out, err := TrimForCache(sts)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*appsv1.StatefulSet)
	if !equality.Semantic.DeepEqual(got.Spec, appsv1.StatefulSetSpec{Replicas: &one}) {
		t.Errorf("trimmed spec %+v, want only the replica count", got.Spec)
	}
	if got.ManagedFields != nil || got.Labels[LabelCluster] != "gc" || got.Status.ReadyReplicas != 1 {
		t.Errorf("trimmed StatefulSet %+v: want its labels and status kept, its managedFields dropped", got)
	}
}

// A brick's claim keeps its metadata, its volume and its phase.
func TestTrimForCacheKeepsOfAClaimItsVolumeAndPhase(t *testing.T) {
	class := "fast"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "bricks-0", Labels: map[string]string{LabelCluster: "gc"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &class,
			VolumeName:       "pv-1",
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{
			Phase:    corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
		},
	}
	out, err := TrimForCache(pvc)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.PersistentVolumeClaim)
	want := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "bricks-0", Labels: map[string]string{LabelCluster: "gc"}},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("trimmed claim %+v, want %+v", got, want)
	}
}

// A Kubernetes Node keeps its metadata, cordon and taints; its status goes.
func TestTrimForCacheKeepsOfANodeItsCordonAndTaints(t *testing.T) {
	taints := []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-1", Labels: map[string]string{corev1.LabelTopologyZone: "a"}},
		Spec:       corev1.NodeSpec{Unschedulable: true, Taints: taints, PodCIDR: "10.0.0.0/24", ProviderID: "kwok://kube-1"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Images:     []corev1.ContainerImage{{Names: []string{"gd2:4.1.0"}, SizeBytes: 1 << 30}},
		},
	}
	out, err := TrimForCache(n)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Node)
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-1", Labels: map[string]string{corev1.LabelTopologyZone: "a"}},
		Spec:       corev1.NodeSpec{Unschedulable: true, Taints: taints},
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("trimmed Node %+v, want %+v", got, want)
	}
}
