#!/usr/bin/env bash
# make test: every package's tests. The e2e package's tests come in four
# sets (e2e/sets_e2e_test.go), run as four processes at once, each with its
# own control plane: the tests that run side by side (each with its own
# namespace, simulator and operator, up to E2E_PARALLEL at once) with every
# other package under `go test ./...`, and each of the three sets of tests
# that must run alone, one after another, in a `go test ./e2e` of its own;
# where the machine can run a real node, a fifth process runs the test on it. Every
# binary the tests run (the race-enabled operator, cmd/'s programs, the real
# node's pause, the old releases) is built once, here, before the first
# package starts (hack/build-test-binaries.sh); no test builds one. The unit
# packages' coverage is held to its floors from this run
# (hack/check-coverage.sh), so CI runs the unit tests once. Prints a line
# per slow or failed test and the output of failing ones, then the ten
# slowest tests and the wall time (hack/testtimes). Fails when any test
# fails or a package's coverage falls below its floor.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
parallel=${TEST_PARALLEL:-4}
e2e_parallel=${E2E_PARALLEL:-6}
start=$(date +%s)
dir=$(mktemp -d)
trap 'rm -rf "${dir}"' EXIT
# No DWARF in the test binaries and the operator they run: linking 60
# race-enabled binaries is a large share of the suite's CPU, and stack
# traces and race reports do not need it. No vet before each package's
# tests either: make lint vets every package in full.
nodwarf=-ldflags=-w
novet=-vet=off
# Built with -trimpath, a package's compile no longer depends on the
# checkout's directory, so a fresh clone (CI's) reuses the build cache
# instead of compiling every package of the project again. Exported, so
# the binaries built for the tests share it.
export GOFLAGS="${GOFLAGS:-} -trimpath"
"${GO}" build -o bin/testtimes ./hack/testtimes || exit 1
built=$(date +%s)
binaries=$(GO="${GO}" hack/build-test-binaries.sh "${dir}") || { echo "test: building the binaries the tests run failed"; exit 1; }
eval "${binaries}"
echo "test: built the binaries the tests run in $(($(date +%s) - built))s"
export ANTHILL_E2E_SET_DIR="${dir}"
# What the real node needs from Debian, installed before the first package
# starts when make test runs as root, as .ci/run does (hack/debian-tools.sh
# lists it); without root nothing is installed, and the real-node set says
# below which command would.
if [[ $(id -u) -eq 0 ]] && ! hack/debian-tools.sh check real-node; then
	echo "test: installing what the real node needs: $(hack/debian-tools.sh command real-node)"
	hack/debian-tools.sh install real-node || echo "test: the install failed"
fi
# Where the real node runs, its kubelet and kube-proxy are built before the
# first package starts too, into the control plane's cache.
realnode=0
if [[ $(id -u) -eq 0 ]] && hack/debian-tools.sh check real-node; then
	realnode=1
	built=$(date +%s)
	out=$(hack/build-realnode.sh 2>&1) || { echo "${out}"; echo "test: building kubelet and kube-proxy failed"; exit 1; }
	echo "test: built the real node's kubelet and kube-proxy in $(($(date +%s) - built))s"
fi
# Real glusterd2 for ./e2e/realgd2 (docs/testing.md#real-glusterd2), which
# runs with the other packages below: as root, Debian's glusterfs packages
# (hack/debian-tools.sh gluster); glusterd2 built once into the tool cache
# from ../shared/third_party/glusterd2 (hack/build-glusterd2.sh exits 2
# where that source is absent). Where either is missing, its tests skip
# and say why.
if [[ $(id -u) -eq 0 ]] && ! hack/debian-tools.sh check gluster; then
	echo "test: installing what real glusterd2 needs: $(hack/debian-tools.sh command gluster)"
	hack/debian-tools.sh install gluster || echo "test: the install failed"
fi
built=$(date +%s)
if gd2bin=$(GO="${GO}" hack/build-glusterd2.sh 2>"${dir}/glusterd2.log"); then
	export ANTHILL_GD2_BIN="${gd2bin}"
	echo "test: glusterd2 ready in $(($(date +%s) - built))s"
elif [[ $? -eq 2 ]]; then
	echo "test: no real glusterd2, e2e/realgd2 skips: $(tail -1 "${dir}/glusterd2.log")"
else
	cat "${dir}/glusterd2.log"
	echo "test: building glusterd2 failed"
	exit 1
fi
# The GD2-era CSI driver for ./e2e/csidriver (docs/testing.md#the-real-csi-driver),
# which runs with the other packages below: built once into the tool cache
# from ../shared/third_party/gluster-csi-driver (hack/build-csi-driver.sh
# exits 2 where that source is absent, and its tests skip and say why).
built=$(date +%s)
if csibin=$(GO="${GO}" hack/build-csi-driver.sh 2>"${dir}/csi-driver.log"); then
	export ANTHILL_CSI_DRIVER_BIN="${csibin}"
	echo "test: the CSI driver ready in $(($(date +%s) - built))s"
elif [[ $? -eq 2 ]]; then
	echo "test: no CSI driver, e2e/csidriver skips: $(tail -1 "${dir}/csi-driver.log")"
else
	cat "${dir}/csi-driver.log"
	echo "test: building the CSI driver failed"
	exit 1
fi
alone=()
for set in alone-nodes alone-releases alone-csi; do
	(
		ANTHILL_E2E_SET=${set} "${GO}" test -json -race "${nodwarf}" "${novet}" -tags e2e -timeout 40m ./e2e/ |
			tee "${dir}/${set}.json" | bin/testtimes -quiet -top 0
		exit "${PIPESTATUS[0]}"
	) &
	alone+=($!)
done
# The real-node set (docs/testing.md#a-real-node), alone in its process
# too, where the machine can run a real node: root and Debian's containerd,
# runc, CNI plugins, iptables and ip (installed above).
if [[ ${realnode} -eq 1 ]]; then
	(
		ANTHILL_E2E_SET=real-node "${GO}" test -json -race "${nodwarf}" "${novet}" -tags e2e -timeout 20m ./e2e/ |
			tee "${dir}/alone-real-node.json" | bin/testtimes -quiet -top 0
		exit "${PIPESTATUS[0]}"
	) &
	alone+=($!)
else
	echo "test: no real node here: the real-node set does not run. It needs root and Debian's containerd," \
		"runc, CNI plugins, iptables and ip; as root, make test installs them with: $(hack/debian-tools.sh command real-node)"
fi
# The packages that take minutes are named first: go test starts them in
# the order it is given them, so they are not the last to start.
long=(./e2e ./e2e/integration ./e2e/apiversions ./e2e/chart ./e2e/architecture ./e2e/image)
ANTHILL_E2E_SET=side-by-side "${GO}" test -json -race "${nodwarf}" "${novet}" -cover -tags e2e -p "${parallel}" -parallel "${e2e_parallel}" -timeout 40m "${long[@]}" ./... |
	tee "${dir}/rest.json" | bin/testtimes -quiet -top 0 | tee "${dir}/rest.txt"
status=${PIPESTATUS[0]}
for pid in "${alone[@]}"; do
	wait "${pid}" || status=1
done
# Only a package that broke its floor is worth a line here.
coverage=$(hack/check-coverage.sh "${dir}/rest.txt") || status=1
grep -v '(floor' <<<"${coverage}" || true
cat "${dir}"/alone-*.json "${dir}/rest.json" | bin/testtimes -silent -top 10 -start "${start}"
exit "${status}"
