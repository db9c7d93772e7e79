// Package architecture holds the tests that keep the project's shape: the
// dependency rule between packages, the one status writer, each machine
// syncer saying at compile time which runner phases it has and writing no
// facts after gathering, no production Go file over 500 lines, shipped
// binaries free of test code, no test building a binary of its own, every
// API field used and named in docs/api.md, and every Markdown link
// resolving. They read the source tree and `go list`, need no control
// plane, and so run in `go test ./...`, `make test-unit` and `make
// coverage` alike.
package architecture
