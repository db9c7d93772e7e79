#!/usr/bin/env bash
# make test: every package's tests in one `go test` (so the race-enabled
# operator the e2e package runs is built once), the e2e package's tests side
# by side (each with its own namespace, simulator and operator:
# e2e/test_env_e2e_test.go) up to E2E_PARALLEL at once. Prints only failing
# tests' output, then the ten slowest tests and the wall time
# (hack/testtimes). Fails when any test fails.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
parallel=${TEST_PARALLEL:-4}
e2e_parallel=${E2E_PARALLEL:-6}
"${GO}" build -o bin/testtimes ./hack/testtimes || exit 1
"${GO}" test -json -race -tags e2e -p "${parallel}" -parallel "${e2e_parallel}" -timeout 40m ./... | bin/testtimes -quiet -top 10
exit "${PIPESTATUS[0]}"
