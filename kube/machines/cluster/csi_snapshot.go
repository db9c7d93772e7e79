package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	rbacv1listers "k8s.io/client-go/listers/rbac/v1"
	storagev1listers "k8s.io/client-go/listers/storage/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// CSIListers read a cluster's CSI objects for the cluster machine. They
// come from the managed-by=anthill informers, so an object someone else
// made under one of our names does not count as present.
type CSIListers struct {
	ServiceAccounts     corev1listers.ServiceAccountLister
	DaemonSets          appsv1listers.DaemonSetLister
	Deployments         appsv1listers.DeploymentLister
	CSIDrivers          storagev1listers.CSIDriverLister
	ClusterRoles        rbacv1listers.ClusterRoleLister
	ClusterRoleBindings rbacv1listers.ClusterRoleBindingLister
	// StorageClasses are every StorageClass, not only anthill's: a class
	// someone else made under the name a cluster wants is a clash to
	// report, not a missing class to create over and over.
	StorageClasses storagev1listers.StorageClassLister
}

// missing lists, as "Kind name" sorted, the CSI objects c's spec asks for
// that do not exist. Only presence counts: what an existing object runs
// is the upgrade machine's business.
func (l CSIListers) missing(c *operatorv1alpha1.GlusterCluster) ([]string, error) {
	if !objects.CSIEnabled(c) {
		return nil, nil // spec.csi.enabled: false asks for no CSI object
	}
	if owner, err := l.driverTakenBy(c); err != nil || owner != "" {
		// Another cluster runs the driver: nothing of c's is missing,
		// and Record says why c gets none (warnCSIClash).
		return nil, err
	}
	want := objects.DesiredCSIObjects(c, "")
	ns := c.Namespace
	var out []string
	check := func(kind, name string, err error) error {
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, kind+" "+name)
			return nil
		case err != nil:
			return fmt.Errorf("get %s %s: %w", kind, name, err)
		}
		return nil
	}
	for _, sa := range want.ServiceAccounts {
		_, err := l.ServiceAccounts.ServiceAccounts(ns).Get(sa.Name)
		if err := check("ServiceAccount", sa.Name, err); err != nil {
			return nil, err
		}
	}
	_, err := l.ClusterRoles.Get(want.ClusterRole.Name)
	if err := check("ClusterRole", want.ClusterRole.Name, err); err != nil {
		return nil, err
	}
	_, err = l.ClusterRoleBindings.Get(want.ClusterRoleBinding.Name)
	if err := check("ClusterRoleBinding", want.ClusterRoleBinding.Name, err); err != nil {
		return nil, err
	}
	for _, d := range want.Drivers {
		_, err := l.CSIDrivers.Get(d.Name)
		if err := check("CSIDriver", d.Name, err); err != nil {
			return nil, err
		}
	}
	for _, d := range want.Controllers {
		_, err := l.Deployments.Deployments(ns).Get(d.Name)
		if err := check("Deployment", d.Name, err); err != nil {
			return nil, err
		}
	}
	for _, d := range want.NodePlugins {
		_, err := l.DaemonSets.DaemonSets(ns).Get(d.Name)
		if err := check("DaemonSet", d.Name, err); err != nil {
			return nil, err
		}
	}
	drift, err := l.storageClassDrift(c, want.StorageClasses)
	if err != nil {
		return nil, err
	}
	out = append(out, drift...)
	slices.Sort(out)
	return out, nil
}

// storageClassDrift lists, as "StorageClass name" with what is wrong, the
// StorageClasses of c that ensureDrivers must create, update, recreate or
// delete: unlike the other CSI objects, a StorageClass follows the spec.
// A class of a wanted name that anthill did not create for c is left out
// (see storageClassClashes).
func (l CSIListers) storageClassDrift(c *operatorv1alpha1.GlusterCluster, want []*storagev1.StorageClass) ([]string, error) {
	var out []string
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Name] = true
		have, err := l.StorageClasses.Get(w.Name)
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, "StorageClass "+w.Name)
		case err != nil:
			return nil, fmt.Errorf("get StorageClass %s: %w", w.Name, err)
		case !objects.StorageClassOf(have, c.Namespace, c.Name):
		case objects.DiffStorageClass(w, have) != objects.StorageClassInSync:
			out = append(out, "StorageClass "+w.Name+" (out of date)")
		}
	}
	ours, err := l.StorageClasses.List(objects.CSIClusterScopedSelector(c.Namespace, c.Name))
	if err != nil {
		return nil, err
	}
	for _, sc := range ours {
		if !wanted[sc.Name] {
			out = append(out, "StorageClass "+sc.Name+" (no longer wanted)")
		}
	}
	return out, nil
}

// ReasonCSIDriverTaken is the reason of the Warning Event that says
// another cluster runs the CSI driver, so this one gets none.
const ReasonCSIDriverTaken = "CSIDriverTaken"

// driverTakenBy names, as namespace/name, the other cluster whose CSIDriver
// holds the driver's fixed name; "" when it is free or c's, or c does not
// ask for it (spec.csi.enabled false).
func (l CSIListers) driverTakenBy(c *operatorv1alpha1.GlusterCluster) (string, error) {
	if !objects.CSIEnabled(c) {
		return "", nil
	}
	d, err := l.CSIDrivers.Get(objects.CSIFileDriverName)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("get CSIDriver %s: %w", objects.CSIFileDriverName, err)
	case objects.CSIClusterScopedSelector(c.Namespace, c.Name).Matches(labels.Set(d.Labels)):
		return "", nil
	}
	return d.Labels[objects.LabelClusterNamespace] + "/" + d.Labels[objects.LabelCluster], nil
}

// ReasonStorageClassNameTaken is the reason of the Warning Event that
// names a StorageClass a cluster wants whose name is taken.
const ReasonStorageClassNameTaken = "StorageClassNameTaken"

// csiClash is what of c's CSI objects another owner holds: the cluster
// whose CSIDriver has the driver's fixed name (driverOwner, as
// namespace/name), or else the StorageClasses c wants whose names are
// taken. Gather reads it; Record surfaces it (warnCSIClash).
type csiClash struct {
	driverOwner    string
	storageClasses []string
}

// readCSIClash reads what of c's CSI objects another owner holds.
func (l CSIListers) readCSIClash(c *operatorv1alpha1.GlusterCluster) (csiClash, error) {
	if c.DeletionTimestamp == nil {
		owner, err := l.driverTakenBy(c)
		if err != nil || owner != "" {
			return csiClash{driverOwner: owner}, err
		}
	}
	clash, err := l.storageClassClashes(c)
	return csiClash{storageClasses: clash}, err
}

// warnCSIClash records a Warning Event on c naming the other cluster that
// runs the CSI driver, or else the StorageClasses it wants that exist
// without being anthill's for c. The Event recorder folds the repeats of
// each sync into one Event.
func (s *Syncer) warnCSIClash(c *operatorv1alpha1.GlusterCluster, clash csiClash) {
	switch {
	case clash.driverOwner != "":
		s.Log.Warn(c, ReasonCSIDriverTaken, fmt.Sprintf(
			"the CSI driver %s is deployed for cluster %s: its name is fixed, so one Gluster cluster per Kubernetes cluster can serve volumes through it, and this cluster gets no CSI objects (docs/csi.md).",
			objects.CSIFileDriverName, clash.driverOwner))
	case len(clash.storageClasses) > 0:
		s.Log.Warn(c, ReasonStorageClassNameTaken, fmt.Sprintf(
			"StorageClass(es) %s exist but were not created by anthill for this cluster: they are left as they are and the driver has no StorageClass of anthill's; set spec.csi.storageClasses.<driver>.name to another name, or create: false.",
			strings.Join(clash.storageClasses, ", ")))
	}
}

// storageClassClashes names the StorageClasses c wants whose name is taken
// by a class anthill did not create for c (an admin's, or another
// cluster's). They are never changed or deleted.
func (l CSIListers) storageClassClashes(c *operatorv1alpha1.GlusterCluster) ([]string, error) {
	if c.DeletionTimestamp != nil {
		return nil, nil
	}
	var out []string
	for _, w := range objects.DesiredStorageClasses(c) {
		have, err := l.StorageClasses.Get(w.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("get StorageClass %s: %w", w.Name, err)
		case !objects.StorageClassOf(have, c.Namespace, c.Name):
			out = append(out, w.Name)
		}
	}
	return out, nil
}

// exists reports whether any CSI object of the cluster named name in
// namespace ns is left, by the labels effects.Kube's deleteCSI selects on.
func (l CSIListers) exists(ns, name string) (bool, error) {
	nsSel, csSel := objects.CSINamespacedSelector(name), objects.CSIClusterScopedSelector(ns, name)
	counts := []func() (int, error){
		func() (int, error) { o, err := l.DaemonSets.DaemonSets(ns).List(nsSel); return len(o), err },
		func() (int, error) { o, err := l.Deployments.Deployments(ns).List(nsSel); return len(o), err },
		func() (int, error) { o, err := l.ServiceAccounts.ServiceAccounts(ns).List(nsSel); return len(o), err },
		func() (int, error) { o, err := l.CSIDrivers.List(csSel); return len(o), err },
		func() (int, error) { o, err := l.ClusterRoles.List(csSel); return len(o), err },
		func() (int, error) { o, err := l.ClusterRoleBindings.List(csSel); return len(o), err },
		func() (int, error) { o, err := l.StorageClasses.List(csSel); return len(o), err },
	}
	for _, count := range counts {
		n, err := count()
		if err != nil {
			return false, err
		}
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}

// fillCSI sets the cluster snapshot's CSI facts: DriversMissing (not while
// deleting, when nothing is to be created), and InfraExists when a CSI
// object is left.
func (l CSIListers) fillCSI(c *operatorv1alpha1.GlusterCluster, missing *[]string, infraExists *bool) error {
	if c.DeletionTimestamp == nil {
		m, err := l.missing(c)
		if err != nil {
			return err
		}
		*missing = m
	}
	if *infraExists {
		return nil
	}
	left, err := l.exists(c.Namespace, c.Name)
	if err != nil {
		return err
	}
	*infraExists = left
	return nil
}

// readSnapshotClass reads, live and only for a cluster with
// spec.csi.snapshots.enabled that is not being deleted, which snapshot API
// resources Kubernetes does not serve (SnapshotAPIMissing) and whether its
// VolumeSnapshotClass is missing (one more object ensureDrivers creates)
// or taken by an object anthill did not make for it.
func (s *Syncer) readSnapshotClass(ctx context.Context, c *operatorv1alpha1.GlusterCluster, f *clusterFacts) error {
	if s.Snapshots == nil || !objects.SnapshotsEnabled(c) || c.DeletionTimestamp != nil {
		return nil
	}
	if owner, err := s.CSI.driverTakenBy(c); err != nil || owner != "" {
		// Another cluster runs the driver: c gets no CSI objects.
		return err
	}
	st, err := s.Snapshots.ClassState(ctx, c)
	if err != nil {
		return err
	}
	f.snap.SnapshotAPIMissing = st.APIMissing
	name := objects.VolumeSnapshotClassName(c)
	switch {
	case st.Missing:
		f.snap.DriversMissing = append(f.snap.DriversMissing, "VolumeSnapshotClass "+name)
		slices.Sort(f.snap.DriversMissing)
	case st.Taken:
		f.snapshotClassTaken = name
	}
	return nil
}

// ReasonSnapshotClassNameTaken is the reason of the Warning Event that
// names a VolumeSnapshotClass a cluster wants whose name is taken.
const ReasonSnapshotClassNameTaken = "SnapshotClassNameTaken"

// warnSnapshotClassTaken records a Warning Event on c naming the
// VolumeSnapshotClass it wants that exists without being anthill's for c.
func (s *Syncer) warnSnapshotClassTaken(c *operatorv1alpha1.GlusterCluster, name string) {
	if name == "" {
		return
	}
	s.Log.Warn(c, ReasonSnapshotClassNameTaken, fmt.Sprintf(
		"VolumeSnapshotClass %s exists but was not created by anthill for this cluster: it is left as it is; set spec.csi.snapshots.className to another name when creating the cluster.", name))
}
