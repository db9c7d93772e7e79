package objects

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// EtcdStorageSize is the size of etcd's data claim: GD2's store is small
// (peers, volumes, devices, options).
const EtcdStorageSize = "1Gi"

func clusterObjectMeta(c *operatorv1alpha1.GlusterCluster, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       c.Namespace,
		Labels:          ClusterLabels(c.Name, component),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(c, glusterClusterKind)},
	}
}

func gd2ServicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{servicePort(portNameGD2, GD2ClientPort, GD2ClientPort), servicePort(portNamePeer, GD2PeerPort, GD2PeerPort)}
}

// HeadlessService gives every node pod of c a stable name
// (<pod>.<cluster>-nodes.<ns>.svc). It publishes pods before they are
// ready: peers must reach a node that is starting or rejoining.
func HeadlessService(c *operatorv1alpha1.GlusterCluster) *corev1.Service {
	return headlessService(c, HeadlessServiceName(c.Name), ComponentGlusterNode, gd2ServicePorts())
}

// ManagementService is the ClusterIP Service the operator reaches GD2's REST
// API through: any ready gluster-node pod of c answers for the cluster.
func ManagementService(c *operatorv1alpha1.GlusterCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: clusterObjectMeta(c, ManagementServiceName(c.Name), ComponentManagement),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: managementSelector(c.Name),
			Ports:    []corev1.ServicePort{servicePort(portNameGD2, GD2ClientPort, GD2ClientPort)},
		},
	}
}

// AuthSecret is the Secret holding c's shared GD2 auth secret value (see
// NewAuthSecretValue). The value is a parameter so that the builder stays
// pure; EnsureClusterInfra generates it once and never again.
func AuthSecret(c *operatorv1alpha1.GlusterCluster, value string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: clusterObjectMeta(c, AuthSecretName(c.Name), ComponentGlusterNode),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{AuthSecretKey: []byte(value)},
	}
}

// EtcdService is the headless Service of c's etcd, its StatefulSet's
// governing Service and GD2's etcd endpoint. It publishes the pod before it
// is ready because etcd resolves its own advertised name at start.
func EtcdService(c *operatorv1alpha1.GlusterCluster) *corev1.Service {
	return headlessService(c, EtcdName(c.Name), ComponentEtcd,
		[]corev1.ServicePort{servicePort(portNameClient, EtcdClientPort, EtcdClientPort), servicePort(portNameEtcdPr, EtcdPeerPort, EtcdPeerPort)})
}

// EtcdStatefulSet is c's one-member etcd. Its data claim is retained when
// the StatefulSet goes; DeleteClusterInfra removes it explicitly.
func EtcdStatefulSet(c *operatorv1alpha1.GlusterCluster) *appsv1.StatefulSet {
	name := EtcdName(c.Name)
	labels := ClusterLabels(c.Name, ComponentEtcd)
	pod := NodePodName(name)
	tls := TLSEnabled(c)
	podHost := fmt.Sprintf("%s.%s.%s.svc", pod, name, c.Namespace)
	advertise := fmt.Sprintf("%s://%s:%d", scheme(tls), podHost, EtcdClientPort)
	ctr := corev1.Container{
		Name:  containerEtcd,
		Image: images.Etcd,
		Command: []string{
			"/usr/local/bin/etcd",
			"--name=" + pod,
			"--data-dir=" + etcdDataDir,
			fmt.Sprintf("--listen-client-urls=%s://0.0.0.0:%d", scheme(tls), EtcdClientPort),
			"--advertise-client-urls=" + advertise,
		},
		Ports:          []corev1.ContainerPort{tcpPort(portNameClient, EtcdClientPort), tcpPort(portNameEtcdPr, EtcdPeerPort)},
		ReadinessProbe: httpProbe("/health", EtcdClientPort, 10),
		VolumeMounts:   []corev1.VolumeMount{{Name: EtcdDataClaimTemplate, MountPath: etcdDataDir}},
	}
	var volumes []corev1.Volume
	if tls {
		// Client and peer ports require a certificate of the cluster's CA,
		// which the kubelet does not have: its probe reads /health from the
		// plain metrics listener, which serves nothing else.
		ctr.Command = append(ctr.Command,
			fmt.Sprintf("--listen-peer-urls=https://0.0.0.0:%d", EtcdPeerPort),
			fmt.Sprintf("--initial-advertise-peer-urls=https://%s:%d", podHost, EtcdPeerPort),
			fmt.Sprintf("--listen-metrics-urls=http://0.0.0.0:%d", etcdMetricsPort))
		ctr.Command = append(ctr.Command, etcdTLSArgs()...)
		ctr.ReadinessProbe.HTTPGet.Port = intstr.FromInt32(etcdMetricsPort)
		v, m := tlsVolume(EtcdTLSSecretName(c.Name), etcdTLSDir)
		volumes = append(volumes, v)
		ctr.VolumeMounts = append(ctr.VolumeMounts, m)
	}
	return workload{
		meta:     clusterObjectMeta(c, name, ComponentEtcd),
		selector: ClusterSelectorLabels(c.Name, ComponentEtcd),
		pod:      podTemplate(labels, nil, corev1.PodSpec{Containers: []corev1.Container{ctr}, Volumes: volumes}),
	}.statefulSet(name, []corev1.PersistentVolumeClaim{
		claim(EtcdDataClaimTemplate, c.Namespace, labels, nil, nil, resource.MustParse(EtcdStorageSize)),
	})
}
