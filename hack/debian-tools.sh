#!/usr/bin/env bash
# The Debian packages the project's checks need beyond Go, in one place for
# .ci/run and make test (hack/test.sh):
#   lint       yamllint (make lint-yaml) and mkdocs (make docs)
#   real-node  containerd, runc, the CNI plugins, iptables and ip for the
#              e2e real node (docs/testing.md, "A real node")
#   gluster    glusterfs-server (glusterfsd, the self-heal daemon, glfsheal),
#              glusterfs-client (the FUSE client), xfsprogs (the bricks'
#              mkfs) and util-linux (unshare, losetup, flock) for real
#              glusterd2 (docs/testing.md, "Real glusterd2")
# usage: hack/debian-tools.sh check|install|command GROUP...
#   check    exits 0 when every group's tools are on the machine
#   install  installs the groups' packages with apt-get unless check
#            passes (needs root)
#   command  prints the apt-get command install runs
set -uo pipefail
action=${1:-}
shift || true
packages=()
checks=()
for group in "$@"; do
	case ${group} in
	lint)
		packages+=(yamllint mkdocs)
		checks+=("command -v yamllint" "command -v mkdocs")
		;;
	real-node)
		packages+=(containerd runc containernetworking-plugins iptables iproute2)
		checks+=("command -v containerd" "command -v runc" "test -x /usr/lib/cni/bridge" "command -v iptables" "command -v ip")
		;;
	gluster)
		packages+=(glusterfs-server glusterfs-client xfsprogs util-linux)
		checks+=("command -v glusterfsd" "command -v glusterfs" "test -x /usr/lib/*/glusterfs/glfsheal" "command -v mkfs.xfs" "command -v unshare" "command -v losetup" "command -v flock")
		;;
	*)
		echo "debian-tools: unknown group ${group:-(none)}: lint, real-node, gluster" >&2
		exit 2
		;;
	esac
done
if [[ ${#packages[@]} -eq 0 ]]; then
	echo "usage: hack/debian-tools.sh check|install|command GROUP..." >&2
	exit 2
fi

check() {
	local c
	for c in "${checks[@]}"; do
		${c} >/dev/null 2>&1 || return 1
	done
}

case ${action} in
check) check ;;
command) echo "apt-get update && apt-get install -y ${packages[*]}" ;;
install)
	check && exit 0
	if [[ $(id -u) -ne 0 ]]; then
		echo "debian-tools: installing ${packages[*]} needs root: apt-get update && apt-get install -y ${packages[*]}" >&2
		exit 1
	fi
	apt-get update -qq && apt-get install -y -qq "${packages[@]}" >/dev/null
	;;
*)
	echo "usage: hack/debian-tools.sh check|install|command GROUP..." >&2
	exit 2
	;;
esac
