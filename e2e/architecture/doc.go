// Package architecture holds the tests that keep the project's shape: the
// dependency rule between packages, the one status writer, and shipped
// binaries free of test code. They read the source tree and `go list`, need
// no control plane, and so run in `go test ./...`, `make test-unit` and
// `make coverage` alike.
package architecture
