package effects

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// syncStorageClasses makes c's StorageClasses follow its spec, read live:
// a missing one is created; one that differs in a field the API server
// lets change is updated; one that differs in a field it keeps immutable
// (provisioner, parameters, reclaimPolicy, volumeBindingMode) is deleted
// and created again, which leaves provisioned volumes as they are (a
// PersistentVolume keeps its own reclaim policy and node affinity); and
// one anthill made for c that the spec no longer asks for (renamed,
// create: false, its driver gone from spec.drivers) is deleted. A class
// without c's labels is never updated or deleted: a clash of names is
// reported by the cluster machine, not fought over.
func (o *Kube) syncStorageClasses(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	api := o.Client.StorageV1().StorageClasses()
	wanted := map[string]bool{}
	for _, want := range objects.DesiredStorageClasses(c) {
		wanted[want.Name] = true
		have, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, err := api.Create(ctx, want, metav1.CreateOptions{}); ignoreExists(err) != nil {
				return fmt.Errorf("create StorageClass %s: %w", want.Name, err)
			}
			continue
		case err != nil:
			return fmt.Errorf("get StorageClass %s: %w", want.Name, err)
		case !objects.StorageClassOf(have, c.Namespace, c.Name):
			continue
		}
		switch objects.DiffStorageClass(want, have) {
		case objects.StorageClassUpdate:
			if _, err := api.Update(ctx, objects.UpdateStorageClass(want, have), metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update StorageClass %s: %w", want.Name, err)
			}
		case objects.StorageClassRecreate:
			// The preconditions make sure the class deleted is the one read.
			pre := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID, ResourceVersion: &have.ResourceVersion}}
			if err := ignoreNotFound(api.Delete(ctx, have.Name, pre)); err != nil {
				return fmt.Errorf("delete StorageClass %s to recreate it: %w", have.Name, err)
			}
			if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("recreate StorageClass %s: %w", want.Name, err)
			}
		}
	}
	ours, err := api.List(ctx, metav1.ListOptions{LabelSelector: objects.CSIClusterScopedSelector(c.Namespace, c.Name).String()})
	if err != nil {
		return fmt.Errorf("list StorageClasses: %w", err)
	}
	for _, sc := range ours.Items {
		if wanted[sc.Name] {
			continue
		}
		pre := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sc.UID}}
		if err := ignoreNotFound(api.Delete(ctx, sc.Name, pre)); err != nil {
			return fmt.Errorf("delete StorageClass %s, no longer wanted: %w", sc.Name, err)
		}
	}
	return nil
}
