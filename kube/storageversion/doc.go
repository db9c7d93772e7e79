// Package storageversion rewrites every object of a CRD at the CRD's storage
// version and then trims the CRD's status.storedVersions to that version
// alone: the storage-version migration that must happen before a release
// may stop serving a version objects were once stored at.
//
// The admin runs it with `kubectl gluster migrate-storage` after installing
// CRDs whose storage version changed (docs/upgrading-the-operator.md). It is
// not the operator's job: the operator holds no write access to
// CustomResourceDefinitions, and the API server itself refuses a CRD that
// drops a version still listed in storedVersions, so a migration forgotten
// is caught before any object becomes unreadable.
//
// Migrate is idempotent and safe to interrupt. An object is rewritten by an
// unchanged update through the main resource: the API server encodes it at
// the storage version, so the write lands in etcd only when the stored
// encoding differs (a second run writes nothing), the status subresource
// keeps the stored status, and metadata.generation does not move.
// storedVersions changes only after every object listed has been rewritten,
// so an interrupted run leaves it as it was and the next run starts over.
package storageversion
