package storageversion

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// FieldManager names the migration in managedFields; an unchanged update
// records no fields, so it appears there only if a write changed something.
const FieldManager = "anthill-storage-migration"

// pageSize bounds one list request; a paged list is one consistent
// snapshot, so objects created while the migration runs are written at
// the storage version by their creator and need no rewrite.
const pageSize = 100

// servingTimeout bounds the wait for the API server to encode at the CRD's
// storage version after the CRD was updated.
var servingTimeout = time.Minute

// Object is one object the migration visited.
type Object struct {
	Namespace, Name string
	// Rewritten is true when the API server wrote the object (its
	// resourceVersion moved); false when its stored encoding was already
	// the storage version's.
	Rewritten bool
}

// Result is what Migrate did to one CRD.
type Result struct {
	CRD            string
	StorageVersion string
	// StoredVersionsBefore is the CRD's status.storedVersions as found.
	StoredVersionsBefore []string
	// Rewritten and Unchanged count the objects visited.
	Rewritten, Unchanged int
	// AlreadyMigrated is true when storedVersions was already only the
	// storage version, so no object needed visiting.
	AlreadyMigrated bool
}

// Clients are the API clients Migrate needs.
type Clients struct {
	CRDs    apiextensionsclient.Interface
	Dynamic dynamic.Interface
}

// Migrate rewrites every object of the CRD called name at its storage
// version and then sets status.storedVersions to that version alone.
// visited, when not nil, is called after each object (the tests interrupt a
// run from it). A cancelled ctx stops the run before storedVersions
// changes.
func Migrate(ctx context.Context, c Clients, name string, visited func(Object)) (Result, error) {
	res := Result{CRD: name}
	crd, err := c.CRDs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return res, fmt.Errorf("get CRD %s: %w", name, err)
	}
	storage, err := storageVersion(crd)
	if err != nil {
		return res, err
	}
	res.StorageVersion = storage
	res.StoredVersionsBefore = slices.Clone(crd.Status.StoredVersions)
	if slices.Equal(crd.Status.StoredVersions, []string{storage}) {
		res.AlreadyMigrated = true
		return res, nil
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: storage, Resource: crd.Spec.Names.Plural}
	if err := waitServedAsStorage(ctx, c, gvr, crd.Spec.Names.Kind); err != nil {
		return res, err
	}
	client := c.Dynamic.Resource(gvr)
	cont := ""
	for {
		list, err := client.List(ctx, metav1.ListOptions{Limit: pageSize, Continue: cont})
		if err != nil {
			return res, fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
		}
		for i := range list.Items {
			o, err := rewrite(ctx, client, &list.Items[i])
			if err != nil {
				return res, fmt.Errorf("rewrite %s %s/%s: %w", crd.Spec.Names.Kind, o.Namespace, o.Name, err)
			}
			if o.Rewritten {
				res.Rewritten++
			} else {
				res.Unchanged++
			}
			if visited != nil {
				visited(o)
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		if cont = list.GetContinue(); cont == "" {
			break
		}
	}
	return res, trimStoredVersions(ctx, c, name, storage)
}

// rewrite writes obj back unchanged through the main resource, retrying on
// a conflict with the object as it is now. A deleted object needs nothing.
func rewrite(ctx context.Context, client dynamic.NamespaceableResourceInterface, obj *unstructured.Unstructured) (Object, error) {
	o := Object{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	ns := client.Namespace(o.Namespace)
	current := obj
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if current == nil {
			got, err := ns.Get(ctx, o.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			current = got
		}
		before := current.GetResourceVersion()
		updated, err := ns.Update(ctx, current, metav1.UpdateOptions{FieldManager: FieldManager})
		if err != nil {
			current = nil
			return err
		}
		o.Rewritten = updated.GetResourceVersion() != before
		return nil
	})
	if apierrors.IsNotFound(err) {
		return o, nil
	}
	return o, err
}

// trimStoredVersions sets storedVersions to [storage] once every object is
// stored at it, unless the CRD's storage version changed meanwhile (then
// the objects must be visited again, at the new one).
func trimStoredVersions(ctx context.Context, c Clients, name, storage string) error {
	crds := c.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now, err := storageVersion(crd)
		if err != nil {
			return err
		}
		if now != storage {
			return fmt.Errorf("CRD %s: the storage version changed from %s to %s during the migration; run it again", name, storage, now)
		}
		if slices.Equal(crd.Status.StoredVersions, []string{storage}) {
			return nil
		}
		crd.Status.StoredVersions = []string{storage}
		_, err = crds.UpdateStatus(ctx, crd, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name, nil
		}
	}
	return "", fmt.Errorf("CRD %s has no storage version", crd.Name)
}

// errNotYetServed says discovery still names another storage version.
var errNotYetServed = errors.New("the API server does not encode at the new storage version yet")

// waitServedAsStorage waits until the API server's discovery reports the
// storage version hash of gvr's version, the sign that it has taken in the
// updated CRD: a rewrite before that could store the old version again.
func waitServedAsStorage(ctx context.Context, c Clients, gvr schema.GroupVersionResource, kind string) error {
	want := storageVersionHash(gvr.Group, gvr.Version, kind)
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, servingTimeout, true, func(context.Context) (bool, error) {
		list, err := c.CRDs.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			last = err
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				if r.StorageVersionHash == want {
					return true, nil
				}
				last = errNotYetServed
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%s at %s: %w (last: %v)", gvr.GroupResource(), gvr.Version, err, last)
	}
	return nil
}

// storageVersionHash is the API server's discovery hash of a storage
// version (k8s.io/apiserver's discovery.StorageVersionHash): the first 8
// bytes of the SHA-256 of group/version/kind, in base64.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}
