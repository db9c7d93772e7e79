package objects

import "k8s.io/apimachinery/pkg/api/meta"

// TrimForCache is the transform every informer of the operator applies
// before it stores an object (cache.TransformFunc): it drops
// managedFields, the API server's record of which field manager set which
// field, which nothing in anthill reads and which for a pod, a StatefulSet
// or a Node is a large part of its metadata. An update built from a cached
// copy then carries no managedFields, which the API server reads as "keep
// them as they are". Anything without object metadata (a tombstone) passes
// unchanged.
func TrimForCache(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
