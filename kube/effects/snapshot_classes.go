package effects

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// SnapshotAPI reads and writes the snapshot.storage.k8s.io/v1 API, which
// a Kubernetes cluster serves only once an admin installed the
// VolumeSnapshot CRDs (docs/csi.md). anthill links no types of it: the
// classes are read and written unstructured.
type SnapshotAPI struct {
	Discovery discovery.DiscoveryInterface
	Dynamic   dynamic.Interface
}

// Missing lists the snapshot API's resources the Kubernetes cluster does
// not serve (objects.SnapshotResources), all of them when its group
// version is unknown.
func (a *SnapshotAPI) Missing(ctx context.Context) ([]string, error) {
	list, err := a.Discovery.ServerResourcesForGroupVersion(objects.SnapshotGroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return slices.Clone(objects.SnapshotResources), nil
	case err != nil:
		return nil, fmt.Errorf("discover %s: %w", objects.SnapshotGroupVersion, err)
	}
	var out []string
	for _, r := range objects.SnapshotResources {
		if !slices.ContainsFunc(list.APIResources, func(ar metav1.APIResource) bool { return ar.Name == r }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// SnapshotClassState is what the Kubernetes cluster holds of c's
// VolumeSnapshotClass: the snapshot API's resources it does not serve,
// and, when it serves them, whether the class is missing or taken by an
// object anthill did not make for c.
type SnapshotClassState struct {
	APIMissing []string
	Missing    bool
	Taken      bool
}

// ClassState reads c's VolumeSnapshotClass live.
func (a *SnapshotAPI) ClassState(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (SnapshotClassState, error) {
	missing, err := a.Missing(ctx)
	if err != nil || len(missing) > 0 || a.Dynamic == nil {
		// Without a dynamic client (a live decision built without one)
		// only the API is read.
		return SnapshotClassState{APIMissing: missing}, err
	}
	name := objects.VolumeSnapshotClassName(c)
	have, err := a.Dynamic.Resource(objects.VolumeSnapshotClassResource).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return SnapshotClassState{Missing: true}, nil
	case err != nil:
		return SnapshotClassState{}, fmt.Errorf("get VolumeSnapshotClass %s: %w", name, err)
	}
	return SnapshotClassState{Taken: !objects.CSIClusterScopedSelector(c.Namespace, c.Name).Matches(labels.Set(have.GetLabels()))}, nil
}

// ensureSnapshotClass creates c's VolumeSnapshotClass when c enables
// snapshots, the API is served and the class is absent. A class of the
// name that is not c's is left alone (the cluster machine reports it), and
// an existing one is not changed: spec.csi.snapshots is fixed at creation.
func (o *Kube) ensureSnapshotClass(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	if o.Snapshots == nil || !objects.SnapshotsEnabled(c) {
		return nil
	}
	st, err := o.Snapshots.ClassState(ctx, c)
	if err != nil || !st.Missing {
		return err
	}
	want := objects.VolumeSnapshotClassObject(c)
	_, err = o.Snapshots.Dynamic.Resource(objects.VolumeSnapshotClassResource).Create(ctx, want, metav1.CreateOptions{})
	if ignoreExists(err) != nil {
		return fmt.Errorf("create VolumeSnapshotClass %s: %w", want.GetName(), err)
	}
	return nil
}

// deleteSnapshotClasses deletes the cluster's VolumeSnapshotClasses, found
// by its labels, when the API is served. Snapshots taken through them are
// not touched: their contents name the driver, not the class.
func (o *Kube) deleteSnapshotClasses(ctx context.Context, ns, cluster string) error {
	if o.Snapshots == nil {
		return nil
	}
	missing, err := o.Snapshots.Missing(ctx)
	if err != nil || slices.Contains(missing, "volumesnapshotclasses") {
		return err
	}
	api := o.Snapshots.Dynamic.Resource(objects.VolumeSnapshotClassResource)
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: objects.CSIClusterScopedSelector(ns, cluster).String()})
	if err != nil {
		return fmt.Errorf("list VolumeSnapshotClasses: %w", err)
	}
	for _, vsc := range list.Items {
		if err := ignoreNotFound(api.Delete(ctx, vsc.GetName(), metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete VolumeSnapshotClass %s: %w", vsc.GetName(), err)
		}
	}
	return nil
}
