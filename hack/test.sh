#!/usr/bin/env bash
# make test: every package's tests, the e2e package's in its shards (see
# e2e/shards_e2e_test.go), all at once. Shard 1 runs with the other
# packages under `go test ./...`; each later shard is its own `go test` of
# ./e2e. E2E_SHARDS=1 runs the package as one process. Fails when any of
# them fails.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
parallel=${TEST_PARALLEL:-4}
shards=${E2E_SHARDS:-2}
dir=$(mktemp -d)
trap 'rm -rf "${dir}"' EXIT
export ANTHILL_E2E_SHARD_DIR="${dir}"
pids=()
for k in $(seq 2 "${shards}"); do
	ANTHILL_E2E_SHARD="${k}/${shards}" "${GO}" test -race -tags e2e -timeout 70m ./e2e/ &
	pids+=($!)
done
first=""
[[ ${shards} -gt 1 ]] && first="1/${shards}"
status=0
ANTHILL_E2E_SHARD="${first}" "${GO}" test -race -tags e2e -p "${parallel}" -timeout 70m ./... || status=1
for pid in "${pids[@]}"; do
	wait "${pid}" || status=1
done
exit ${status}
