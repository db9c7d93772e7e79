package machines

import (
	"k8s.io/client-go/informers"
	appsv1informers "k8s.io/client-go/informers/apps/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	rbacv1informers "k8s.io/client-go/informers/rbac/v1"
	storagev1informers "k8s.io/client-go/informers/storage/v1"

	"github.com/gluster/anthill/kube/machines/cluster"
)

// csiInformerSet holds the informers of CSI objects the cluster machine
// watches; all come from the managed-by=anthill factory.
type csiInformerSet struct {
	serviceAccounts     corev1informers.ServiceAccountInformer
	daemonSets          appsv1informers.DaemonSetInformer
	deployments         appsv1informers.DeploymentInformer
	drivers             storagev1informers.CSIDriverInformer
	clusterRoles        rbacv1informers.ClusterRoleInformer
	clusterRoleBindings rbacv1informers.ClusterRoleBindingInformer
	// storageClasses come from an unfiltered factory (see
	// cluster.CSIListers.StorageClasses).
	storageClasses storagev1informers.StorageClassInformer
}

// csiInformers takes the StorageClass informer from all, a factory that
// sees every object, and the others from f (managed-by=anthill).
func csiInformers(f, all informers.SharedInformerFactory) csiInformerSet {
	return csiInformerSet{
		storageClasses:      all.Storage().V1().StorageClasses(),
		serviceAccounts:     f.Core().V1().ServiceAccounts(),
		daemonSets:          f.Apps().V1().DaemonSets(),
		deployments:         f.Apps().V1().Deployments(),
		drivers:             f.Storage().V1().CSIDrivers(),
		clusterRoles:        f.Rbac().V1().ClusterRoles(),
		clusterRoleBindings: f.Rbac().V1().ClusterRoleBindings(),
	}
}

func (s csiInformerSet) listers() cluster.CSIListers {
	return cluster.CSIListers{
		ServiceAccounts: s.serviceAccounts.Lister(), DaemonSets: s.daemonSets.Lister(), Deployments: s.deployments.Lister(),
		CSIDrivers: s.drivers.Lister(), ClusterRoles: s.clusterRoles.Lister(), ClusterRoleBindings: s.clusterRoleBindings.Lister(),
		StorageClasses: s.storageClasses.Lister(),
	}
}
