#!/usr/bin/env bash
# make test-cold: make test as on a fresh machine, without one (issue 48).
# The Go build cache (GOCACHE), the module cache (GOMODCACHE; the module
# proxy is still used) and anthill's tool cache (XDG_CACHE_HOME, under which
# the hack/ scripts and e2e/framework keep ~/.cache/anthill) point at empty
# directories of its own under one temporary directory, removed at the end
# (COLD_KEEP=1 keeps it). Runs make test's tool builds (make test-tools: the
# control plane, promtool, helm), then make test itself, and prints the wall time of each
# apart, with the share of the tests' time that built the binaries they
# run. Takes about an hour of both cores on a 2-core machine.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
base=$(mktemp -d "${TMPDIR:-/tmp}/anthill-cold.XXXXXX") || exit 1
cleanup() {
	if [[ -n ${COLD_KEEP:-} ]]; then
		echo "test-cold: caches kept in ${base}"
		return
	fi
	# The module cache is read-only.
	chmod -R u+w "${base}" 2>/dev/null
	rm -rf "${base}"
}
trap cleanup EXIT
export GOCACHE="${base}/go-build" GOMODCACHE="${base}/mod" XDG_CACHE_HOME="${base}/cache"
mkdir -p "${GOCACHE}" "${GOMODCACHE}" "${XDG_CACHE_HOME}"
# Nothing may point back at the warm caches.
unset ANTHILL_TOOLS_DIR ANTHILL_CONTROLPLANE_DIR ANTHILL_CODEGEN_BIN ANTHILL_RELEASE_DIR PROMTOOL \
	ANTHILL_E2E_PREBUILT ANTHILL_E2E_OPERATOR ANTHILL_E2E_ANTHILL ANTHILL_E2E_KUBECTL_GLUSTER \
	ANTHILL_E2E_ANTHILL_DEV ANTHILL_E2E_PAUSE ANTHILL_E2E_RELEASES
echo "test-cold: empty caches under ${base}"

t=$(date +%s)
"${MAKE}" test-tools
tools_status=$?
tools=$(($(date +%s) - t))
echo "test-cold: tool builds: ${tools}s"
[[ ${tools_status} -eq 0 ]] || { echo "test-cold: the tool builds failed"; exit 1; }

log="${base}/test.log"
t=$(date +%s)
# make test finds its tools built and goes straight to hack/test.sh.
"${MAKE}" test 2>&1 | tee "${log}"
status=${PIPESTATUS[0]}
tests=$(($(date +%s) - t))
binaries=$(sed -nE 's/^test: built the binaries the tests run in ([0-9]+)s$/\1/p' "${log}")
echo "test-cold: tool builds ${tools}s; tests ${tests}s (building the binaries they run: ${binaries:-?}s of it); in all $((tools + tests))s"
exit "${status}"
