#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from Go modules pinned under tools/ into a per-user
# cache outside the repository. Idempotent: a binary is rebuilt only when the
# go.sum of the module that pins it changed. Prints the bin directory last.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
k8s_version="v1.37.2"
cache="${ANTHILL_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/controlplane/${k8s_version}}"
bin="${cache}/bin"
mkdir -p "${bin}"

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${k8s_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"

# build MODULE_DIR OUTPUT PACKAGE [LDFLAGS]
build() {
	local mod="$1" out="$2" pkg="$3" flags="${4:-}"
	local stamp="${bin}/.${out}.stamp"
	local want
	want="$(sha256sum "${root}/tools/${mod}/go.sum" | cut -d' ' -f1)"
	if [[ -x "${bin}/${out}" && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
		echo "controlplane: ${out} up to date" >&2
		return 0
	fi
	echo "controlplane: building ${out} (cold builds take minutes)" >&2
	local start=$SECONDS
	(cd "${root}/tools/${mod}" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "${flags}" -o "${bin}/${out}.tmp" "${pkg}")
	mv "${bin}/${out}.tmp" "${bin}/${out}"
	echo "${want}" > "${stamp}"
	echo "controlplane: built ${out} in $((SECONDS - start))s" >&2
}

build etcd etcd go.etcd.io/etcd/server/v3
build kwok kwok sigs.k8s.io/kwok/cmd/kwok
stages="${bin}/kwok-stages.yaml"
if [[ ! -s "${stages}" || "${bin}/.kwok.stamp" -nt "${stages}" ]]; then
	(cd "${root}/tools/kwok" && GOFLAGS=-mod=mod go run ./stages) > "${stages}.tmp"
	mv "${stages}.tmp" "${stages}"
fi
build kube kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "${ldflags}"
build kube kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "${ldflags}"
build kube kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "${ldflags}"
echo "${bin}"
