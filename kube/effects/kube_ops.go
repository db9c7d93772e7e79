package effects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// nodeNameSuffixLen is the length of the random suffix of a GlusterNode
// name made by ScaleNodes.
const nodeNameSuffixLen = 5

// createAttempts bounds the retries of a GlusterNode create whose random
// name collided with an existing node.
const createAttempts = 3

// Kube implements transitions.KubeOps against the Kubernetes API. It
// reads live objects from the API server, not from listers: an action must
// act on the state as it is now, not as an informer last saw it.
type Kube struct {
	Client  kubernetes.Interface
	Anthill versioned.Interface
	// NameSuffix returns the random suffix of a new GlusterNode name; nil
	// means 5 random lowercase alphanumerics.
	NameSuffix func() string
	// TLS issues certificates for clusters with spec.caSecretRef; nil
	// builds one from Client and Anthill.
	TLS *TLS
}

func (o *Kube) tls() *TLS {
	if o.TLS != nil {
		return o.TLS
	}
	return &TLS{Client: o.Client, Anthill: o.Anthill}
}

// IssueCertificates writes c's trust bundle and every due certificate
// (TLS.IssueCertificates).
func (o *Kube) IssueCertificates(ctx context.Context, ct transitions.ClusterTarget) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	nodes, err := o.clusterNodes(ctx, c.Namespace, c.Name)
	if err != nil {
		return err
	}
	return o.tls().IssueCertificates(ctx, c, nodes)
}

var _ transitions.KubeOps = (*Kube)(nil)

func (o *Kube) suffix() string {
	if o.NameSuffix == nil {
		return utilrand.String(nodeNameSuffixLen)
	}
	// createNodes draws names concurrently; an injected source need not
	// be safe for that.
	suffixMu.Lock()
	defer suffixMu.Unlock()
	return o.NameSuffix()
}

var suffixMu sync.Mutex

// createParallelism bounds the GlusterNodes ScaleNodes creates at once.
const createParallelism = 8

// ignoreExists makes AlreadyExists success: every create here is
// create-if-absent and never replaces what is there.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ignoreNotFound makes NotFound success: every delete here is idempotent.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (o *Kube) getCluster(ctx context.Context, namespace, name string) (*operatorv1alpha1.GlusterCluster, error) {
	c, err := o.Anthill.OperatorV1alpha1().GlusterClusters(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get GlusterCluster %s/%s: %w", namespace, name, err)
	}
	return c, nil
}

// EnsureNodeWorkload creates the node's StatefulSet if absent; the
// StatefulSet controller creates the brick PVCs from its claim templates.
// A node with an external address runs no pod, so there is nothing to do.
func (o *Kube) EnsureNodeWorkload(ctx context.Context, n transitions.NodeTarget) error {
	node, err := o.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get GlusterNode %s: %w", n.NodeKey(), err)
	}
	if node.Spec.ExternalAddress != "" {
		return nil
	}
	c, err := o.getCluster(ctx, n.Namespace, node.Spec.Cluster)
	if err != nil {
		return err
	}
	sts := objects.NodeStatefulSet(c, node, objects.ClusterVersion(c))
	_, err = o.Client.AppsV1().StatefulSets(n.Namespace).Create(ctx, sts, metav1.CreateOptions{})
	if err := ignoreExists(err); err != nil {
		return fmt.Errorf("create StatefulSet %s/%s: %w", n.Namespace, sts.Name, err)
	}
	return nil
}

// RollNodeWorkload sets the node's StatefulSet to the pod template the
// cluster's spec gives the node at version (image, resources, env,
// placement: objects.NodeStatefulSet), then deletes the pod if it still
// runs another version or another template revision. The StatefulSet uses
// OnDelete, so deleting the pod is what restarts it, and the version and
// revision annotations on the live pod tell whether that already happened.
// The delete carries the pod's UID as a precondition so that a pod
// recreated in between is never deleted by mistake.
func (o *Kube) RollNodeWorkload(ctx context.Context, n transitions.NodeTarget, version string) error {
	c, err := o.getCluster(ctx, n.Namespace, n.Cluster)
	if err != nil {
		return err
	}
	node, err := o.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get GlusterNode %s: %w", n.NodeKey(), err)
	}
	want := objects.NodeStatefulSet(c, node, version).Spec.Template
	revision := want.Annotations[objects.AnnotationRevision]
	stsName := objects.NodeStatefulSetName(n.Name)
	stsClient := o.Client.AppsV1().StatefulSets(n.Namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sts, err := stsClient.Get(ctx, stsName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// The live template carries the API server's defaults, so it is
		// compared by the annotations that name what it was built from.
		if a := sts.Spec.Template.Annotations; a[objects.AnnotationVersion] == version && a[objects.AnnotationRevision] == revision {
			return nil
		}
		sts.Spec.Template = *want.DeepCopy()
		_, err = stsClient.Update(ctx, sts, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set StatefulSet %s/%s to version %q, revision %s: %w", n.Namespace, stsName, version, revision, err)
	}

	podName := objects.NodePodName(n.Name)
	pod, err := o.Client.CoreV1().Pods(n.Namespace).Get(ctx, podName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// The StatefulSet controller will create it from the new template.
		return nil
	case err != nil:
		return fmt.Errorf("get pod %s/%s: %w", n.Namespace, podName, err)
	}
	if pod.DeletionTimestamp != nil ||
		(pod.Annotations[objects.AnnotationVersion] == version && pod.Annotations[objects.AnnotationRevision] == revision) {
		return nil
	}
	err = o.Client.CoreV1().Pods(n.Namespace).Delete(ctx, podName, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &pod.UID},
	})
	// Conflict: the UID precondition failed, a new pod already replaced
	// the one we saw.
	if err := ignoreNotFound(err); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s to restart it at version %q, revision %s: %w", n.Namespace, podName, version, revision, err)
	}
	return nil
}

// LeaveManagementService relabels the node's pod out of the management
// Service's selector with a merge patch. The StatefulSet does not reconcile
// labels of existing pods, so the change sticks until the pod is deleted.
func (o *Kube) LeaveManagementService(ctx context.Context, n transitions.NodeTarget) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, objects.LabelManagement, objects.ManagementLeaving)
	_, err := o.Client.CoreV1().Pods(n.Namespace).Patch(ctx, objects.NodePodName(n.Name), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("relabel pod %s/%s: %w", n.Namespace, objects.NodePodName(n.Name), err)
	}
	return nil
}

// DeleteNodeWorkload deletes the node's StatefulSet, then its brick PVCs:
// those labelled for the node, and those named after its claim templates
// (in case a label was lost). The PVC protection finalizer keeps a claim
// until the pod using it is gone.
func (o *Kube) DeleteNodeWorkload(ctx context.Context, n transitions.NodeTarget) error {
	stsName := objects.NodeStatefulSetName(n.Name)
	err := o.Client.AppsV1().StatefulSets(n.Namespace).Delete(ctx, stsName, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete StatefulSet %s/%s: %w", n.Namespace, stsName, err)
	}
	sel := labels.SelectorFromSet(labels.Set{objects.LabelCluster: n.Cluster, objects.LabelNode: n.Name})
	names := []string{objects.StateClaimName(n.Name)}
	for i := range n.Devices {
		names = append(names, objects.BrickClaimName(n.Name, i))
	}
	if err := o.deleteClaims(ctx, n.Namespace, sel, names); err != nil {
		return fmt.Errorf("delete PVCs of node %s: %w", n.NodeKey(), err)
	}
	return nil
}

// deleteClaims deletes the PVCs matching sel and those named in names.
func (o *Kube) deleteClaims(ctx context.Context, namespace string, sel labels.Selector, names []string) error {
	pvcs := o.Client.CoreV1().PersistentVolumeClaims(namespace)
	list, err := pvcs.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return fmt.Errorf("list PVCs %q: %w", sel, err)
	}
	seen := map[string]bool{}
	for _, pvc := range list.Items {
		seen[pvc.Name] = true
		if pvc.DeletionTimestamp != nil {
			continue
		}
		if err := ignoreNotFound(pvcs.Delete(ctx, pvc.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete PVC %s: %w", pvc.Name, err)
		}
	}
	for _, name := range names {
		if seen[name] {
			continue
		}
		if err := ignoreNotFound(pvcs.Delete(ctx, name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete PVC %s: %w", name, err)
		}
	}
	return nil
}

// EnsureClusterInfra creates, each only if absent, the GD2 auth secret (not
// when the admin supplies one through spec.management.authSecretRef), the
// etcd Service and StatefulSet, the headless Service and the management
// Service. An external cluster runs none of these: it gets only its
// management Service, without a selector, and the EndpointSlices of its
// addresses (SyncEndpoints).
func (o *Kube) EnsureClusterInfra(ctx context.Context, ct transitions.ClusterTarget) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	if objects.IsExternal(c) {
		return o.SyncEndpoints(ctx, ct)
	}
	if err := o.ensureAuthSecret(ctx, c); err != nil {
		return err
	}
	core := o.Client.CoreV1().Services(c.Namespace)
	for _, svc := range []*corev1.Service{objects.EtcdService(c), objects.HeadlessService(c), objects.ManagementService(c)} {
		if _, err := core.Create(ctx, svc, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create Service %s/%s: %w", c.Namespace, svc.Name, err)
		}
	}
	etcd := objects.EtcdStatefulSet(c)
	if _, err := o.Client.AppsV1().StatefulSets(c.Namespace).Create(ctx, etcd, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create StatefulSet %s/%s: %w", c.Namespace, etcd.Name, err)
	}
	return nil
}

// ensureAuthSecret creates the cluster's GD2 auth secret once. An existing
// Secret is never read back, compared or rewritten: every node must keep
// the secret it started with, and a second writer that raced us to the
// create wins (AlreadyExists), which is just as good.
func (o *Kube) ensureAuthSecret(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	name, _ := objects.AuthSecretRef(c)
	if name != objects.AuthSecretName(c.Name) {
		return nil
	}
	secrets := o.Client.CoreV1().Secrets(c.Namespace)
	_, err := secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get Secret %s/%s: %w", c.Namespace, name, err)
	}
	value, err := objects.NewAuthSecretValue()
	if err != nil {
		return err
	}
	if _, err := secrets.Create(ctx, objects.AuthSecret(c, value), metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create Secret %s/%s: %w", c.Namespace, name, err)
	}
	return nil
}

// ScaleNodes makes each node template's count of GlusterNodes right.
//
// ClusterTarget carries only a total, so the plan comes from the live
// cluster and its live GlusterNodes (the live object wins over desired,
// which may be a sync old), with ct.Bricks: objects.ScalePlanOf, over
// states.PlanScale, which decides which templates gain nodes (in manual
// mode to nodeTemplates[].nodes; in automatic mode to the counts the
// autoscaler recorded in status.autoscaling, within minNodes..maxNodes)
// and which nodes are asked to leave (a template's surplus, the one whose
// removal moves the least data first; never a node whose template is no
// longer in the spec, or a node added by hand). The cluster machine runs
// the same plan on the same live reads and the same brick counts, to
// record the change in the ledger before this runs.
//
// Scale-down sets the decommission request on the nodes the plan names;
// scale-up creates one GlusterNode per entry of the plan.
func (o *Kube) ScaleNodes(ctx context.Context, ct transitions.ClusterTarget, desired int) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	if c.Spec.Mode == operatorv1alpha1.ClusterModeExternal {
		return nil
	}
	nodes, err := o.clusterNodes(ctx, c.Namespace, c.Name)
	if err != nil {
		return err
	}
	plan := objects.ScalePlanOf(c, nodes, ct.Bricks)
	for _, n := range plan.Decommission {
		if err := o.requestDecommission(ctx, n); err != nil {
			return err
		}
	}
	return o.createNodes(ctx, c, plan.Create)
}

// createNodes creates one GlusterNode per entry of templates, up to
// createParallelism at a time: a new cluster's nodes then start
// provisioning together instead of one API round trip apart. Every create
// is attempted; the errors are joined.
func (o *Kube) createNodes(ctx context.Context, c *operatorv1alpha1.GlusterCluster, templates []*operatorv1alpha1.NodeTemplate) error {
	sem := make(chan struct{}, createParallelism)
	errs := make([]error, len(templates))
	var wg sync.WaitGroup
	for i, t := range templates {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = o.createNode(ctx, c, t)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// clusterNodes lists the GlusterNodes whose spec.cluster is cluster. It
// filters on the spec, not a label, so that nodes added by hand count too.
func (o *Kube) clusterNodes(ctx context.Context, namespace, cluster string) ([]*operatorv1alpha1.GlusterNode, error) {
	list, err := o.Anthill.OperatorV1alpha1().GlusterNodes(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list GlusterNodes in %s: %w", namespace, err)
	}
	var out []*operatorv1alpha1.GlusterNode
	for i := range list.Items {
		if list.Items[i].Spec.Cluster == cluster {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

func (o *Kube) createNode(ctx context.Context, c *operatorv1alpha1.GlusterCluster, t *operatorv1alpha1.NodeTemplate) error {
	nodes := o.Anthill.OperatorV1alpha1().GlusterNodes(c.Namespace)
	var err error
	for range createAttempts {
		n := objects.NodeFromTemplate(c, t, o.suffix())
		if objects.TLSEnabled(c) {
			if err := o.tls().issueNode(ctx, c, n); err != nil {
				return err
			}
		}
		_, err = nodes.Create(ctx, n, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			break
		}
		// A random name collided: draw another.
	}
	if err != nil {
		return fmt.Errorf("create GlusterNode for template %q of %s/%s: %w", t.Name, c.Namespace, c.Name, err)
	}
	return nil
}

// requestDecommission sets the decommission request with a merge patch, so
// it neither races other writers of the object nor needs a resourceVersion.
func (o *Kube) requestDecommission(ctx context.Context, n *operatorv1alpha1.GlusterNode) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{objects.AnnotationRequest: objects.RequestDecommission}},
	})
	if err != nil {
		return fmt.Errorf("encode decommission request: %w", err)
	}
	_, err = o.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("request decommission of GlusterNode %s/%s: %w", n.Namespace, n.Name, err)
	}
	return nil
}

// DeleteNodes deletes the cluster's GlusterNodes one at a time; each node's
// finalizer keeps it until its machine has drained and removed it, and the
// next is deleted only when it is gone. One at a time because a node leaves
// the management Service to have its peer deleted: were every node deleted
// at once, no GD2 member would be left to serve the requests.
//
// The last node cannot have its peer deleted (GD2 refuses to remove its only
// peer); its own machine sees that the cluster is going and removes it with
// the pool (Detaching -> Deleting, reason LastPeer). Nodes go in scale-down
// order (states.ScaleDownOrder, by ct.Bricks).
func (o *Kube) DeleteNodes(ctx context.Context, ct transitions.ClusterTarget) error {
	nodes, err := o.clusterNodes(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	var leaving, rest []*operatorv1alpha1.GlusterNode
	for _, n := range nodes {
		if n.DeletionTimestamp != nil {
			leaving = append(leaving, n)
		} else {
			rest = append(rest, n)
		}
	}
	if len(leaving) > 0 || len(rest) == 0 {
		return nil // a node is still leaving; its removal requeues the cluster
	}
	n := objects.ScaleDownOrder(rest, ct.Bricks)[0]
	err = o.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Delete(ctx, n.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &n.UID},
	})
	if err := ignoreNotFound(err); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete GlusterNode %s/%s: %w", n.Namespace, n.Name, err)
	}
	return nil
}

// DeleteClusterInfra deletes what EnsureClusterInfra and EnsureCSIDrivers
// created, the disruption budgets, and etcd's PVC (for an external
// cluster: the CSI drivers, its management Service and EndpointSlices; the
// other names are simply not found). It works from names and labels alone,
// so it also completes after the GlusterCluster is gone. The auth secret
// is deleted only if anthill made it: an admin's Secret that happens to
// carry the same name is left alone.
func (o *Kube) DeleteClusterInfra(ctx context.Context, ct transitions.ClusterTarget) error {
	ns := ct.Namespace
	// An external cluster's EndpointSlices (none exist in other modes).
	if err := o.deleteEndpointSlices(ctx, ns, ct.Name); err != nil {
		return err
	}
	etcd := objects.EtcdName(ct.Name)
	err := o.Client.AppsV1().StatefulSets(ns).Delete(ctx, etcd, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete StatefulSet %s/%s: %w", ns, etcd, err)
	}
	for _, name := range []string{etcd, objects.HeadlessServiceName(ct.Name), objects.ManagementServiceName(ct.Name)} {
		if err := ignoreNotFound(o.Client.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete Service %s/%s: %w", ns, name, err)
		}
	}
	if err := o.deleteCSI(ctx, ns, ct.Name); err != nil {
		return fmt.Errorf("delete CSI drivers of cluster %s/%s: %w", ns, ct.Name, err)
	}
	if err := o.deleteOwnAuthSecret(ctx, ns, ct.Name); err != nil {
		return err
	}
	if err := o.deleteBudgets(ctx, ns, ct.Name, nil); err != nil {
		return err
	}
	sel := labels.SelectorFromSet(labels.Set{objects.LabelCluster: ct.Name, objects.LabelComponent: objects.ComponentEtcd})
	if err := o.deleteClaims(ctx, ns, sel, []string{objects.EtcdDataClaimName(ct.Name)}); err != nil {
		return fmt.Errorf("delete etcd PVCs of cluster %s/%s: %w", ns, ct.Name, err)
	}
	return nil
}

func (o *Kube) deleteOwnAuthSecret(ctx context.Context, ns, cluster string) error {
	name := objects.AuthSecretName(cluster)
	secrets := o.Client.CoreV1().Secrets(ns)
	s, err := secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get Secret %s/%s: %w", ns, name, err)
	}
	if s.Labels[objects.LabelManagedBy] != objects.ManagedByAnthill || s.Labels[objects.LabelCluster] != cluster {
		return nil
	}
	err = secrets.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete Secret %s/%s: %w", ns, name, err)
	}
	return nil
}

// setVersionAnnotation records version on a pod template; it reports
// whether that changed anything.
func setVersionAnnotation(t *corev1.PodTemplateSpec, version string) bool {
	if t.Annotations[objects.AnnotationVersion] == version {
		return false
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[objects.AnnotationVersion] = version
	return true
}
