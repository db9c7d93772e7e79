package objects

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// The frames every workload anthill builds shares. The builders fill in
// what differs (containers, volumes, strategies); the frames are built
// here once, so two workloads cannot drift apart in what they share.

// workload is the frame of one workload: its object's metadata, the
// labels that select its pods, and their template.
type workload struct {
	meta     metav1.ObjectMeta
	selector map[string]string
	pod      corev1.PodTemplateSpec
}

// podTemplate is a pod template of labels, annotations and spec.
func podTemplate(labels, annotations map[string]string, spec corev1.PodSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}, Spec: spec}
}

// statefulSet is w as a one-replica StatefulSet governed by service,
// whose claims outlive it: they are retained when the set is deleted or
// scaled down, and the operator removes them explicitly.
func (w workload) statefulSet(service string, claims []corev1.PersistentVolumeClaim) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: w.meta,
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: service,
			Selector:    &metav1.LabelSelector{MatchLabels: w.selector},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template:             w.pod,
			VolumeClaimTemplates: claims,
		},
	}
}

// deployment is w as a Deployment of replicas with strategy.
func (w workload) deployment(replicas int32, strategy appsv1.DeploymentStrategyType) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: w.meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: w.selector},
			Strategy: appsv1.DeploymentStrategy{Type: strategy},
			Template: w.pod,
		},
	}
}

// daemonSet is w as a DaemonSet updated by strategy.
func (w workload) daemonSet(strategy appsv1.DaemonSetUpdateStrategyType) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: w.meta,
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: w.selector},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: strategy},
			Template:       w.pod,
		},
	}
}

// versionedPod is the template of a pod labelled like its workload (a
// copy of meta's labels) and annotated with the version it runs.
func versionedPod(meta metav1.ObjectMeta, version string, spec corev1.PodSpec) corev1.PodTemplateSpec {
	return podTemplate(maps.Clone(meta.Labels), map[string]string{AnnotationVersion: version}, spec)
}

// httpProbe is a probe that GETs path on port every period seconds.
func httpProbe(path string, port, period int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}},
		PeriodSeconds: period,
	}
}

// tcpPort is a container's TCP port named name.
func tcpPort(name string, port int32) corev1.ContainerPort {
	return corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP}
}

// servicePort is a Service's TCP port named name, on port, sent to
// target.
func servicePort(name string, port, target int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(target), Protocol: corev1.ProtocolTCP}
}

// headlessService is c's headless Service name of its component's pods
// on ports. It publishes the pods before they are ready: what runs in them
// resolves its own and its peers' names while it starts.
func headlessService(c *operatorv1alpha1.GlusterCluster, name, component string, ports []corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: clusterObjectMeta(c, name, component),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 ClusterSelectorLabels(c.Name, component),
			Ports:                    ports,
			PublishNotReadyAddresses: true,
		},
	}
}

// claim is a ReadWriteOnce claim template of size in class (nil: the
// default class) with mode (nil: the API's default, a filesystem).
func claim(name, namespace string, labels map[string]string, mode *corev1.PersistentVolumeMode, class *string, size resource.Quantity) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:       mode,
			StorageClassName: class,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}
}

// hostPathVolume is the host's directory path as volume name, of type t.
func hostPathVolume(name, path string, t corev1.HostPathType) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: ptr.To(t)}}}
}
