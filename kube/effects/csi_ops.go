package effects

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// EnsureCSIDrivers creates, each only if absent, the CSI objects c's spec
// asks for (objects.DesiredCSIObjects). It never updates an existing object, so it
// never changes the version anything runs: SetCSIVersion does, for the
// upgrade machine. A new object gets csiCreateVersion. The StorageClasses
// are the exception: they run nothing, and syncStorageClasses keeps them
// in line with the spec.
func (o *Kube) EnsureCSIDrivers(ctx context.Context, ct transitions.ClusterTarget) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	if c.DeletionTimestamp != nil || !objects.CSIEnabled(c) {
		return nil // deleteInfra is about to remove them, or none is asked for
	}
	version, err := o.csiCreateVersion(ctx, c)
	if err != nil {
		return err
	}
	objs := objects.DesiredCSIObjects(c, version)
	ns := c.Namespace
	// The driver's name is fixed, so its CSIDriver and kubelet's plugin
	// registration can be one cluster's only: create nothing while another
	// cluster (or an install outside anthill) holds the name.
	if d, err := o.Client.StorageV1().CSIDrivers().Get(ctx, objects.CSIFileDriverName, metav1.GetOptions{}); err == nil {
		if !objects.CSIClusterScopedSelector(ns, c.Name).Matches(labels.Set(d.Labels)) {
			return fmt.Errorf("CSIDriver %s exists and is not this cluster's: one Gluster cluster per Kubernetes cluster can run the driver (docs/csi.md)", d.Name)
		}
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get CSIDriver %s: %w", objects.CSIFileDriverName, err)
	}
	fail := func(kind, name string, err error) error {
		return fmt.Errorf("create %s %s: %w", kind, name, err)
	}
	for _, sa := range objs.ServiceAccounts {
		if _, err := o.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fail("ServiceAccount", ns+"/"+sa.Name, err)
		}
	}
	rbac := o.Client.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, objs.ClusterRole, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fail("ClusterRole", objs.ClusterRole.Name, err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, objs.ClusterRoleBinding, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fail("ClusterRoleBinding", objs.ClusterRoleBinding.Name, err)
	}
	for _, d := range objs.Drivers {
		if _, err := o.Client.StorageV1().CSIDrivers().Create(ctx, d, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fail("CSIDriver", d.Name, err)
		}
	}
	for _, d := range objs.Controllers {
		if _, err := o.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fail("Deployment", ns+"/"+d.Name, err)
		}
	}
	for _, d := range objs.NodePlugins {
		if _, err := o.Client.AppsV1().DaemonSets(ns).Create(ctx, d, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fail("DaemonSet", ns+"/"+d.Name, err)
		}
	}
	// Last, so that a class never names a driver that is not deployed.
	if err := o.syncStorageClasses(ctx, c); err != nil {
		return err
	}
	return o.ensureSnapshotClass(ctx, c)
}

// csiCreateVersion is the version a newly created CSI object runs:
// spec.csi.version when set; else the version the cluster's node plugins
// already run (a driver added later joins its sibling, and the upgrade
// machine rolls both together); else spec.gluster.version, which the
// servers of a new cluster run.
func (o *Kube) csiCreateVersion(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (string, error) {
	if c.Spec.CSI != nil && c.Spec.CSI.Version != "" {
		return c.Spec.CSI.Version, nil
	}
	for _, k := range []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile, operatorv1alpha1.GlusterDriverBlock} {
		// block: the node plugin of a release before block was refused.
		name := objects.CSINodeDaemonSetNameOf(c.Name, k)
		ds, err := o.Client.AppsV1().DaemonSets(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return "", fmt.Errorf("get DaemonSet %s/%s: %w", c.Namespace, name, err)
		}
		if v := ds.Spec.Template.Annotations[objects.AnnotationVersion]; v != "" {
			return v, nil
		}
	}
	return objects.ClusterVersion(c), nil
}

// deleteCSI deletes every CSI object of the cluster, found by labels alone
// so that it also works after the GlusterCluster is gone: an object of the
// same name without anthill's labels is not ours and is left alone. Pods
// of the workloads go with them (background propagation).
func (o *Kube) deleteCSI(ctx context.Context, ns, cluster string) error {
	nsl := metav1.ListOptions{LabelSelector: objects.CSINamespacedSelector(cluster).String()}
	csl := metav1.ListOptions{LabelSelector: objects.CSIClusterScopedSelector(ns, cluster).String()}
	bg := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	apps := o.Client.AppsV1()

	// The classes first: no new claim or snapshot should reach a driver
	// being removed.
	if err := o.deleteSnapshotClasses(ctx, ns, cluster); err != nil {
		return err
	}
	scs, err := o.Client.StorageV1().StorageClasses().List(ctx, csl)
	if err != nil {
		return fmt.Errorf("list StorageClasses: %w", err)
	}
	for _, sc := range scs.Items {
		if err := ignoreNotFound(o.Client.StorageV1().StorageClasses().Delete(ctx, sc.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete StorageClass %s: %w", sc.Name, err)
		}
	}
	ds, err := apps.DaemonSets(ns).List(ctx, nsl)
	if err != nil {
		return fmt.Errorf("list CSI DaemonSets: %w", err)
	}
	for _, d := range ds.Items {
		if err := ignoreNotFound(apps.DaemonSets(ns).Delete(ctx, d.Name, bg)); err != nil {
			return fmt.Errorf("delete DaemonSet %s/%s: %w", ns, d.Name, err)
		}
	}
	deps, err := apps.Deployments(ns).List(ctx, nsl)
	if err != nil {
		return fmt.Errorf("list CSI Deployments: %w", err)
	}
	for _, d := range deps.Items {
		if err := ignoreNotFound(apps.Deployments(ns).Delete(ctx, d.Name, bg)); err != nil {
			return fmt.Errorf("delete Deployment %s/%s: %w", ns, d.Name, err)
		}
	}
	sas, err := o.Client.CoreV1().ServiceAccounts(ns).List(ctx, nsl)
	if err != nil {
		return fmt.Errorf("list CSI ServiceAccounts: %w", err)
	}
	for _, s := range sas.Items {
		if err := ignoreNotFound(o.Client.CoreV1().ServiceAccounts(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete ServiceAccount %s/%s: %w", ns, s.Name, err)
		}
	}
	drivers, err := o.Client.StorageV1().CSIDrivers().List(ctx, csl)
	if err != nil {
		return fmt.Errorf("list CSIDrivers: %w", err)
	}
	for _, d := range drivers.Items {
		if err := ignoreNotFound(o.Client.StorageV1().CSIDrivers().Delete(ctx, d.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete CSIDriver %s: %w", d.Name, err)
		}
	}
	rbac := o.Client.RbacV1()
	crbs, err := rbac.ClusterRoleBindings().List(ctx, csl)
	if err != nil {
		return fmt.Errorf("list ClusterRoleBindings: %w", err)
	}
	for _, b := range crbs.Items {
		if err := ignoreNotFound(rbac.ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete ClusterRoleBinding %s: %w", b.Name, err)
		}
	}
	crs, err := rbac.ClusterRoles().List(ctx, csl)
	if err != nil {
		return fmt.Errorf("list ClusterRoles: %w", err)
	}
	for _, r := range crs.Items {
		if err := ignoreNotFound(rbac.ClusterRoles().Delete(ctx, r.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete ClusterRole %s: %w", r.Name, err)
		}
	}
	return nil
}

// SetCSIVersion sets the cluster's CSI clients to version, then restarts
// the node plugin pods that can be restarted safely.
//
// It sets the version annotation, and every container's image to the one
// the spec gives it at version (a changed image tag in spec.csi included),
// on the controller Deployments and the block target Deployments, then on
// the node plugin DaemonSets. The node plugin DaemonSets use OnDelete, so
// setting them restarts nothing by itself; SetCSIVersion then deletes the
// plugin pods still at another version or other images on Kubernetes
// nodes where no pod uses a volume of the cluster's
// drivers (read live, see PinnedNodes), and the DaemonSet controller
// recreates them at version. A plugin pod on a node with such a volume is
// pinned: its FUSE mounts serve running pods, so it keeps the old plugin
// until the node is drained or rebooted or an admin deletes it. No CSI
// object at all is success: the upgrade machine sees no plugin pods.
func (o *Kube) SetCSIVersion(ctx context.Context, ct transitions.ClusterTarget, version string) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	apps := o.Client.AppsV1()
	// The controllers first: a node plugin is restarted only once the
	// controller beside it runs the new images.
	for _, w := range csiWorkloads(c, version) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if w.daemonSet {
				ds, err := apps.DaemonSets(ct.Namespace).Get(ctx, w.name, metav1.GetOptions{})
				if err != nil || !setTemplateImages(&ds.Spec.Template, w.images, version) {
					return err
				}
				_, err = apps.DaemonSets(ct.Namespace).Update(ctx, ds, metav1.UpdateOptions{})
				return err
			}
			dep, err := apps.Deployments(ct.Namespace).Get(ctx, w.name, metav1.GetOptions{})
			if err != nil || !setTemplateImages(&dep.Spec.Template, w.images, version) {
				return err
			}
			_, err = apps.Deployments(ct.Namespace).Update(ctx, dep, metav1.UpdateOptions{})
			return err
		})
		if err := ignoreNotFound(err); err != nil {
			return fmt.Errorf("set %s %s/%s to version %q: %w", w.kind(), ct.Namespace, w.name, version, err)
		}
	}
	return o.restartUnpinnedPlugins(ctx, c, version)
}

// restartUnpinnedPlugins deletes node plugin pods of c not at version on
// nodes that PinnedNodes does not report. Each delete carries the pod's
// UID, so a pod recreated meanwhile is never deleted by mistake.
func (o *Kube) restartUnpinnedPlugins(ctx context.Context, c *operatorv1alpha1.GlusterCluster, version string) error {
	pods := o.Client.CoreV1().Pods(c.Namespace)
	sel := labels.SelectorFromSet(labels.Set{objects.LabelCluster: c.Name, objects.LabelComponent: objects.ComponentCSINode})
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return fmt.Errorf("list CSI node plugin pods of %s/%s: %w", c.Namespace, c.Name, err)
	}
	plugins := pluginImages(c, version)
	var old []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && !pluginPodCurrent(&p, plugins, version) {
			old = append(old, p)
		}
	}
	if len(old) == 0 {
		return nil
	}
	pinned, err := o.PinnedNodes(ctx, c)
	if err != nil {
		return err
	}
	for _, p := range old {
		if pinned[p.Spec.NodeName] {
			continue
		}
		err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err := ignoreNotFound(err); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete CSI node plugin pod %s/%s to restart it at %s: %w", c.Namespace, p.Name, version, err)
		}
	}
	return nil
}

// PinnedNodes reads live which Kubernetes nodes run a pod using a volume
// of c's drivers.
func (o *Kube) PinnedNodes(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (map[string]bool, error) {
	pvs, err := o.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list PersistentVolumes: %w", err)
	}
	ptrs := make([]*corev1.PersistentVolume, len(pvs.Items))
	for i := range pvs.Items {
		ptrs[i] = &pvs.Items[i]
	}
	return pinnedNodeSet(objects.CSIDriverNames(c), ptrs, func(ns string) ([]*corev1.Pod, error) {
		l, err := o.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", ns, err)
		}
		out := make([]*corev1.Pod, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out, nil
	})
}

// pinnedNodeSet is the set of Kubernetes nodes running a pod (not yet
// terminated; a pod being deleted still holds its mounts) whose claim is
// bound to a PersistentVolume of one of drivers. podsIn lists the pods of
// a namespace; it is called only for namespaces holding such claims.
func pinnedNodeSet(drivers map[string]bool, pvs []*corev1.PersistentVolume, podsIn func(ns string) ([]*corev1.Pod, error)) (map[string]bool, error) {
	claims := map[string]map[string]bool{} // namespace → claim names
	for _, pv := range pvs {
		if pv.Spec.CSI == nil || !drivers[pv.Spec.CSI.Driver] || pv.Spec.ClaimRef == nil || pv.Status.Phase != corev1.VolumeBound {
			continue
		}
		ref := pv.Spec.ClaimRef
		if claims[ref.Namespace] == nil {
			claims[ref.Namespace] = map[string]bool{}
		}
		claims[ref.Namespace][ref.Name] = true
	}
	pinned := map[string]bool{}
	for ns, names := range claims {
		pods, err := podsIn(ns)
		if err != nil {
			return nil, err
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil && names[v.PersistentVolumeClaim.ClaimName] {
					pinned[p.Spec.NodeName] = true
					break
				}
			}
		}
	}
	return pinned, nil
}

// csiWorkload is one CSI Deployment or DaemonSet of a cluster as its spec
// gives it: its name and the image of each container.
type csiWorkload struct {
	daemonSet bool
	name      string
	images    map[string]string
}

func (w csiWorkload) kind() string {
	if w.daemonSet {
		return "DaemonSet"
	}
	return "Deployment"
}

// csiWorkloads are c's CSI workloads at version: the controllers and
// block targets, then the node plugins.
func csiWorkloads(c *operatorv1alpha1.GlusterCluster, version string) []csiWorkload {
	want := objects.DesiredCSIObjects(c, version)
	var out []csiWorkload
	for _, d := range want.Controllers {
		out = append(out, csiWorkload{name: d.Name, images: objects.ContainerImages(d.Spec.Template.Spec)})
	}
	for _, d := range want.NodePlugins {
		out = append(out, csiWorkload{daemonSet: true, name: d.Name, images: objects.ContainerImages(d.Spec.Template.Spec)})
	}
	return out
}

// pluginImages maps each of c's node plugin DaemonSets at version to its
// containers' images.
func pluginImages(c *operatorv1alpha1.GlusterCluster, version string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, w := range csiWorkloads(c, version) {
		if w.daemonSet {
			out[w.name] = w.images
		}
	}
	return out
}

// pluginPodCurrent reports whether node plugin pod p runs version and the
// images its DaemonSet has in plugins (pluginImages).
func pluginPodCurrent(p *corev1.Pod, plugins map[string]map[string]string, version string) bool {
	if p.Annotations[objects.AnnotationVersion] != version {
		return false
	}
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "DaemonSet" {
			want, ok := plugins[ref.Name]
			return !ok || maps.Equal(objects.ContainerImages(p.Spec), want)
		}
	}
	return true
}

// setTemplateImages sets the version annotation of a pod template and the
// image of each container named in images; it reports whether anything
// changed.
func setTemplateImages(t *corev1.PodTemplateSpec, images map[string]string, version string) bool {
	changed := setVersionAnnotation(t, version)
	for i := range t.Spec.Containers {
		ctr := &t.Spec.Containers[i]
		if img, ok := images[ctr.Name]; ok && ctr.Image != img {
			ctr.Image = img
			changed = true
		}
	}
	return changed
}
