#!/usr/bin/env bash
# Builds the programs of the e2e suite's real node, kubelet and kube-proxy,
# from k8s.io/kubernetes pinned in tools/kubelet (the control plane's
# release), into the control plane's per-user cache, beside kube-apiserver.
# Idempotent: rebuilt only when tools/kubelet/go.sum changes. containerd,
# runc and the CNI plugins come from Debian's packages (containerd,
# runc, containernetworking-plugins); this script only says when they are
# missing. Prints the bin directory last.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
k8s_version="v1.37.2"
cache="${ANTHILL_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/controlplane/${k8s_version}}"
bin="${cache}/bin"
mkdir -p "${bin}"

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${k8s_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"
want="$(sha256sum "${root}/tools/kubelet/go.sum" | cut -d' ' -f1)"
for prog in kubelet kube-proxy; do
	stamp="${bin}/.${prog}.stamp"
	if [[ -x "${bin}/${prog}" && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
		echo "realnode: ${prog} up to date" >&2
		continue
	fi
	echo "realnode: building ${prog} (a minute or more cold)" >&2
	start=$SECONDS
	(cd "${root}/tools/kubelet" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${bin}/${prog}.tmp" "k8s.io/kubernetes/cmd/${prog}")
	mv "${bin}/${prog}.tmp" "${bin}/${prog}"
	echo "${want}" > "${stamp}"
	echo "realnode: built ${prog} in $((SECONDS - start))s" >&2
done
missing=()
for cmd in containerd ctr runc iptables nsenter unshare ip; do
	command -v "${cmd}" >/dev/null || missing+=("${cmd}")
done
[[ -x /usr/lib/cni/bridge || -x /opt/cni/bin/bridge ]] || missing+=("CNI plugins")
if [[ ${#missing[@]} -gt 0 ]]; then
	echo "realnode: missing ${missing[*]}: apt-get install containerd runc containernetworking-plugins iptables iproute2" >&2
fi
echo "${bin}"
