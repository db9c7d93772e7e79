package machines

import (
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	appsv1informers "k8s.io/client-go/informers/apps/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	rbacv1informers "k8s.io/client-go/informers/rbac/v1"
	storagev1informers "k8s.io/client-go/informers/storage/v1"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	rbacv1listers "k8s.io/client-go/listers/rbac/v1"
	storagev1listers "k8s.io/client-go/listers/storage/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// csiListers read a cluster's CSI objects for the cluster machine. They
// come from the managed-by=anthill informers, so an object someone else
// made under one of our names does not count as present.
type csiListers struct {
	ServiceAccounts     corev1listers.ServiceAccountLister
	DaemonSets          appsv1listers.DaemonSetLister
	Deployments         appsv1listers.DeploymentLister
	CSIDrivers          storagev1listers.CSIDriverLister
	ClusterRoles        rbacv1listers.ClusterRoleLister
	ClusterRoleBindings rbacv1listers.ClusterRoleBindingLister
}

// missing lists, as "Kind name" sorted, the CSI objects c's spec asks for
// that do not exist. Only presence counts: what an existing object runs
// is the upgrade machine's business.
func (l csiListers) missing(c *operatorv1alpha1.GlusterCluster) ([]string, error) {
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
	for _, d := range append(want.Controllers, want.BlockTargets...) {
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
	slices.Sort(out)
	return out, nil
}

// exists reports whether any CSI object of the cluster named name in
// namespace ns is left, by the labels effects.Kube's deleteCSI selects on.
func (l csiListers) exists(ns, name string) (bool, error) {
	nsSel, csSel := objects.CSINamespacedSelector(name), objects.CSIClusterScopedSelector(ns, name)
	counts := []func() (int, error){
		func() (int, error) { o, err := l.DaemonSets.DaemonSets(ns).List(nsSel); return len(o), err },
		func() (int, error) { o, err := l.Deployments.Deployments(ns).List(nsSel); return len(o), err },
		func() (int, error) { o, err := l.ServiceAccounts.ServiceAccounts(ns).List(nsSel); return len(o), err },
		func() (int, error) { o, err := l.CSIDrivers.List(csSel); return len(o), err },
		func() (int, error) { o, err := l.ClusterRoles.List(csSel); return len(o), err },
		func() (int, error) { o, err := l.ClusterRoleBindings.List(csSel); return len(o), err },
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
func (l csiListers) fillCSI(c *operatorv1alpha1.GlusterCluster, missing *[]string, infraExists *bool) error {
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

// csiInformerSet holds the informers of CSI objects the cluster machine
// watches; all come from the managed-by=anthill factory.
type csiInformerSet struct {
	serviceAccounts     corev1informers.ServiceAccountInformer
	daemonSets          appsv1informers.DaemonSetInformer
	deployments         appsv1informers.DeploymentInformer
	drivers             storagev1informers.CSIDriverInformer
	clusterRoles        rbacv1informers.ClusterRoleInformer
	clusterRoleBindings rbacv1informers.ClusterRoleBindingInformer
}

func csiInformers(f informers.SharedInformerFactory) csiInformerSet {
	return csiInformerSet{
		serviceAccounts:     f.Core().V1().ServiceAccounts(),
		daemonSets:          f.Apps().V1().DaemonSets(),
		deployments:         f.Apps().V1().Deployments(),
		drivers:             f.Storage().V1().CSIDrivers(),
		clusterRoles:        f.Rbac().V1().ClusterRoles(),
		clusterRoleBindings: f.Rbac().V1().ClusterRoleBindings(),
	}
}

func (s csiInformerSet) listers() csiListers {
	return csiListers{
		ServiceAccounts: s.serviceAccounts.Lister(), DaemonSets: s.daemonSets.Lister(), Deployments: s.deployments.Lister(),
		CSIDrivers: s.drivers.Lister(), ClusterRoles: s.clusterRoles.Lister(), ClusterRoleBindings: s.clusterRoleBindings.Lister(),
	}
}
