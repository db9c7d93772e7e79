// Package apiversions tests the two served versions of the
// operator.gluster.org API, v1alpha1 and v1beta1, on the real API server of
// e2e/framework (build tag e2e): every field written through one version
// reads back equal through the other, and the storage-version migration
// (kube/storageversion, `kubectl gluster migrate-storage`) rewrites objects
// stored at v1alpha1 at v1beta1, as etcd shows, without changing them.
// Each test starts its own control plane, since the migration test
// installs CRDs of its own.
package apiversions
