package objects

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// Labels anthill puts on everything it creates. Selectors use LabelCluster
// and LabelNode; LabelComponent tells a cluster's kinds of object apart.
const (
	LabelCluster   = "operator.gluster.org/cluster"
	LabelNode      = "operator.gluster.org/node"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
)

// LabelZone is a failure zone: on a Gluster pod (from its StatefulSet's
// template) and its zone's disruption budget, and on a gluster-blockd
// target Deployment.
const LabelZone = "operator.gluster.org/zone"

// LabelManagement on a Gluster pod puts it behind the management Service
// (ManagementMember). Before a leaving node's peer is deleted the operator
// flips it to ManagementLeaving: GD2 refuses to delete the node that serves
// the request, so the request must reach another node. The GD2 simulator's
// pod link reads the same label (kubelink.ManagementLabel).
const (
	LabelManagement   = "operator.gluster.org/management"
	ManagementMember  = "member"
	ManagementLeaving = "leaving"
)

// Values of LabelComponent and LabelManagedBy.
const (
	ComponentGlusterNode = "gluster-node"
	ComponentEtcd        = "etcd"
	ComponentManagement  = "management"
	ManagedByAnthill     = "anthill"
)

// AnnotationRequest carries an administrator's one-shot request on a
// GlusterNode; its values are the Request* constants. ScaleNodes sets
// RequestDecommission on surplus nodes, exactly as an admin would.
const (
	AnnotationRequest   = "operator.gluster.org/request"
	RequestDecommission = "decommission"
	RequestMaintenance  = "maintenance"
	RequestResume       = "resume"
)

// AnnotationVersion on a node pod template is the Gluster version the pod
// runs; RollNodeWorkload compares it with the live pod's to decide whether
// the pod still has to be replaced.
const AnnotationVersion = "operator.gluster.org/version"

// AnnotationRevision on a node pod template is NodeTemplateRevision of the
// template: the live pod's copy tells which template it was made from.
const AnnotationRevision = "operator.gluster.org/revision"

// Finalizers that hold a GlusterNode or GlusterCluster until the operator
// has drained and removed what it stands for.
const (
	FinalizerNode    = "operator.gluster.org/node-protection"
	FinalizerCluster = "operator.gluster.org/cluster-protection"
)

// GD2 and etcd ports.
const (
	// GD2ClientPort serves GD2's REST API (and /ping).
	GD2ClientPort = 24007
	// GD2PeerPort is where peers reach each other; peer add dials it.
	GD2PeerPort = 24008
	// EtcdClientPort is etcd's client port GD2 stores its state through.
	EtcdClientPort = 2379
	// EtcdPeerPort is etcd's peer port (unused by a one-member etcd, but
	// etcd insists on listening on it).
	EtcdPeerPort = 2380
)

// AuthSecretKey is the data key of the GD2 auth secret: GD2's auth file
// holds exactly this value, 64 lowercase hex characters.
const AuthSecretKey = "secret"

// GD2StateDir is GD2's local state directory in the node container; GD2
// reads its REST auth secret from the file "auth" in it.
const GD2StateDir = "/var/lib/glusterd2"

// defaultDeviceCount is the number of claims a node gets when its storage
// does not say.
const defaultDeviceCount = 1

// NodeStatefulSetName is the name of the StatefulSet that runs node.
func NodeStatefulSetName(node string) string { return node }

// NodePodName is the name of node's one pod.
func NodePodName(node string) string { return node + "-0" }

// HeadlessServiceName is the Service that gives every node pod of cluster a
// stable DNS name.
func HeadlessServiceName(cluster string) string { return cluster + "-nodes" }

// ManagementServiceName is the ClusterIP Service the operator reaches GD2 of
// cluster through.
func ManagementServiceName(cluster string) string { return cluster + "-mgmt" }

// AuthSecretName is the Secret holding cluster's shared GD2 auth secret.
func AuthSecretName(cluster string) string { return cluster + "-gd2-auth" }

// EtcdName names both the etcd StatefulSet and its Service of cluster.
func EtcdName(cluster string) string { return cluster + "-etcd" }

// EtcdDataClaimTemplate is the name of the etcd StatefulSet's claim
// template; its one PVC is EtcdDataClaimName.
const EtcdDataClaimTemplate = "data"

// EtcdDataClaimName is the PVC the etcd StatefulSet of cluster creates.
func EtcdDataClaimName(cluster string) string {
	return EtcdDataClaimTemplate + "-" + NodePodName(EtcdName(cluster))
}

// EtcdEndpoint is the client URL GD2 of c stores its state at: https when
// c has TLS.
func EtcdEndpoint(c *operatorv1alpha1.GlusterCluster) string {
	return fmt.Sprintf("%s://%s.%s.svc:%d", scheme(TLSEnabled(c)), EtcdName(c.Name), c.Namespace, EtcdClientPort)
}

// StateClaimTemplate is the node StatefulSet's claim template for GD2's
// state directory; StateClaimSize is its request (GD2 keeps a few small
// files there).
const (
	StateClaimTemplate = "state"
	StateClaimSize     = "1Gi"
)

// StateClaimName is the PVC that holds node's GD2 state.
func StateClaimName(node string) string { return StateClaimTemplate + "-" + NodePodName(node) }

// HostStateDir is where a node that uses host devices keeps GD2's state on
// its host.
func HostStateDir(namespace, node string) string {
	return "/var/lib/anthill/" + namespace + "/" + node
}

// BrickClaimTemplateName is the i-th (0-based) brick claim template of a
// node StatefulSet.
func BrickClaimTemplateName(i int) string { return "brick-" + strconv.Itoa(i) }

// BrickClaimName is the PVC the StatefulSet controller creates for the
// i-th brick claim template of node: <template>-<pod>.
func BrickClaimName(node string, i int) string {
	return BrickClaimTemplateName(i) + "-" + NodePodName(node)
}

// CSINodeDaemonSetName is the CSI node plugin DaemonSet of cluster.
func CSINodeDaemonSetName(cluster string) string { return cluster + "-csi-node" }

// NodePodHost is the stable DNS name of node's pod in the headless Service,
// without a port.
func NodePodHost(namespace, cluster, node string) string {
	return fmt.Sprintf("%s.%s.%s.svc", NodePodName(node), HeadlessServiceName(cluster), namespace)
}

// NodePeerID is the GD2 peer id node's GD2 runs with (GD2_PEER_ID): the
// GlusterNode's UID, a UUID fixed for the object's lifetime. "" before the
// API server assigned one.
func NodePeerID(n *operatorv1alpha1.GlusterNode) string { return string(n.UID) }

// NodeAddress is the address node is added to GD2 with: spec.externalAddress
// for a server outside Kubernetes, else its pod's stable name on the GD2
// peer port.
func NodeAddress(n *operatorv1alpha1.GlusterNode) string {
	if n.Spec.ExternalAddress != "" {
		return n.Spec.ExternalAddress
	}
	return fmt.Sprintf("%s:%d", NodePodHost(n.Namespace, n.Spec.Cluster, n.Name), GD2PeerPort)
}

// NodeDevicePaths are the block devices node registers in GD2:
// spec.storage.devices when set (host devices), else one path per claim
// (deviceCount, default 1) in claimDeviceDir: /dev/anthill/brick-0,
// brick-1, ... The claims appear at these paths as volumeDevices in the
// pod, under a directory no host has, so that no claim can be taken for a
// disk of the host the privileged container also sees.
func NodeDevicePaths(n *operatorv1alpha1.GlusterNode) []string {
	if s := n.Spec.Storage; s != nil && len(s.Devices) > 0 {
		return append([]string(nil), s.Devices...)
	}
	count := defaultDeviceCount
	if s := n.Spec.Storage; s != nil && s.DeviceCount != nil && *s.DeviceCount > 0 {
		count = int(*s.DeviceCount)
	}
	if NodeProvisioner(n) == ProvisionerLoop {
		return LoopDevicePaths(count)
	}
	return ClaimDevicePaths(count)
}

// GD2's provisioners (the device API's "provisioner").
const (
	ProvisionerLVM  = "lvm"
	ProvisionerLoop = "loop"
)

// NodeProvisioner is the GD2 provisioner node's devices are registered
// with: spec.storage.provisioner, lvm when unset.
func NodeProvisioner(n *operatorv1alpha1.GlusterNode) string {
	if s := n.Spec.Storage; s != nil && s.Provisioner != "" {
		return s.Provisioner
	}
	return ProvisionerLVM
}

// LoopDevicePaths are the directories count loop-provisioner claims are
// mounted at in a node's container, one per claim: GD2 keeps each brick
// of such a device as an image file in it.
func LoopDevicePaths(count int) []string {
	out := make([]string, 0, count)
	for i := range count {
		out = append(out, loopDeviceDir+"/"+BrickClaimTemplateName(i))
	}
	return out
}

// ClaimDevicePaths are the paths of count brick claims in a node's
// container.
func ClaimDevicePaths(count int) []string {
	out := make([]string, 0, count)
	for i := range count {
		out = append(out, claimDeviceDir+"/"+BrickClaimTemplateName(i))
	}
	return out
}

// NodeEndpoint is the GD2 REST base URL of node's own GD2: its pod's stable
// name (or the host of spec.externalAddress) on the REST port, over https
// when the cluster's management endpoint is https (TLS on, or an https
// spec.management.endpoint).
func NodeEndpoint(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) string {
	scheme := "http"
	if strings.HasPrefix(ManagementEndpoint(c), "https://") {
		scheme = "https"
	}
	host := NodePodHost(n.Namespace, n.Spec.Cluster, n.Name)
	if n.Spec.ExternalAddress != "" {
		host = n.Spec.ExternalAddress
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	}
	return fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(host, strconv.Itoa(GD2ClientPort)))
}

// ManagementEndpoint is the GD2 REST base URL of cluster:
// spec.management.endpoint when set, else the management Service (https
// when c has TLS).
func ManagementEndpoint(c *operatorv1alpha1.GlusterCluster) string {
	if m := c.Spec.Management; m != nil && m.Endpoint != "" {
		return m.Endpoint
	}
	return fmt.Sprintf("%s://%s:%d", scheme(TLSEnabled(c)), ManagementHost(c), GD2ClientPort)
}

// AuthSecretRef is the Secret and key GD2 of cluster authenticates with:
// spec.management.authSecretRef when set (key defaults to "secret"), else
// the secret the operator creates.
func AuthSecretRef(c *operatorv1alpha1.GlusterCluster) (name, key string) {
	if m := c.Spec.Management; m != nil && m.AuthSecretRef != nil && m.AuthSecretRef.Name != "" {
		key = m.AuthSecretRef.Key
		if key == "" {
			key = AuthSecretKey
		}
		return m.AuthSecretRef.Name, key
	}
	return AuthSecretName(c.Name), AuthSecretKey
}

// NewAuthSecretValue returns a fresh GD2 auth secret in GD2's own format:
// 32 random bytes as 64 lowercase hex characters.
func NewAuthSecretValue() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate GD2 auth secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// ClusterLabels are the labels of every object of cluster with component.
func ClusterLabels(cluster, component string) map[string]string {
	return map[string]string{
		LabelCluster:   cluster,
		LabelComponent: component,
		LabelManagedBy: ManagedByAnthill,
	}
}

// NodeLabels are the labels of node's StatefulSet, pod and PVCs.
func NodeLabels(cluster, node string) map[string]string {
	l := ClusterLabels(cluster, ComponentGlusterNode)
	l[LabelNode] = node
	return l
}

// nodeSelectorLabels select node's pod. They leave out managed-by so that
// the selector, which is immutable, never depends on a cosmetic label.
func nodeSelectorLabels(cluster, node string) map[string]string {
	return map[string]string{LabelCluster: cluster, LabelNode: node, LabelComponent: ComponentGlusterNode}
}

// podLabels are a node pod's labels: the node's, plus membership of the
// management Service (only on the pod, never in a selector, so the operator
// can take one pod out without touching the StatefulSet).
func podLabels(node map[string]string) map[string]string {
	l := make(map[string]string, len(node)+1)
	for k, v := range node {
		l[k] = v
	}
	l[LabelManagement] = ManagementMember
	return l
}

// managementSelector selects the cluster's Gluster pods that have not been
// taken out of the management Service (see LabelManagement).
func managementSelector(cluster string) map[string]string {
	l := ClusterSelectorLabels(cluster, ComponentGlusterNode)
	l[LabelManagement] = ManagementMember
	return l
}

// ClusterSelectorLabels select the objects of cluster with component.
func ClusterSelectorLabels(cluster, component string) map[string]string {
	return map[string]string{LabelCluster: cluster, LabelComponent: component}
}
