#!/usr/bin/env bash
# Builds, without a container engine, the test images the real node runs
# for a GlusterCluster's own pods (docs/testing.md, "GD2 and etcd pods on
# the real node"); the pinned images stay what users run by default:
#
#   glusterd2  the contract of the pinned gluster/glusterd2-nightly
#              (/usr/sbin/glusterd2, /etc/glusterd2/glusterd2.toml with the
#              packaged paths, /var/lib/glusterd2, glusterfs, xfsprogs,
#              lvm2 with udev off) holding glusterd2 as `make gd2` builds
#              it over Debian's glusterfs-server 10.3, with the two
#              adaptations ../shared/third_party/glusterd2/NOTES.md names
#              for it: a glusterfsd shim first on PATH that gives each
#              brick a port of its own, and glfsheal's directory on PATH.
#   etcd       the control plane's etcd (make controlplane) at
#              /usr/local/bin/etcd, as etcd's release image has it.
#
# The GD2 image's files are those of the Debian packages installed on this
# machine (hack/debian-tools.sh install gluster) and everything they
# depend on, copied as dpkg lists them, without documentation. Each image
# is packed by tools/image (--rootfs) into
# ${XDG_CACHE_HOME:-~/.cache}/anthill/test-images/<name>-<hash>/image.tar,
# <hash> covering its inputs (this script, the image builder, the
# binaries, the package versions), and reused while they are the same.
#
# usage: hack/build-test-images.sh
# Prints "<name> <reference> <archive>" for each image. Exits 2 with a
# one-line reason when an input is missing, so that a test can skip.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${XDG_CACHE_HOME:-${HOME}/.cache}/anthill/test-images"
tools="${ANTHILL_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/tools}/image"
tool="${tools}/anthill-image"
mkdir -p "${cache}" "${tools}"

absent() {
	echo "test-images: $*" >&2
	exit 2
}

[[ $(id -u) -eq 0 ]] || absent "copying the packages' files keeps their owners and setuid bits only as root"
"${root}/hack/debian-tools.sh" check gluster || absent "Debian's glusterfs is not installed: $("${root}/hack/debian-tools.sh" command gluster)"
gd2bin=$("${root}/hack/build-glusterd2.sh" path 2>/dev/null) || absent "glusterd2 is not built: run make gd2"
cpbin="${ANTHILL_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/controlplane/v1.37.2/bin}"
[[ -x ${cpbin}/etcd ]] || absent "no etcd in ${cpbin}: run make controlplane"

want="$(cat "${root}/tools/image/go.sum" "${root}"/tools/image/*.go | sha256sum | cut -d' ' -f1)"
if [[ ! -x "${tool}" || "$(cat "${tool}.stamp" 2>/dev/null)" != "${want}" ]]; then
	(cd "${root}/tools/image" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "${tool}.tmp" .)
	mv "${tool}.tmp" "${tool}"
	echo "${want}" >"${tool}.stamp"
fi

arch=$(go env GOARCH)
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
# A fixed time for every file: the images depend on their inputs only.
epoch=1700000000
self=$(cat "${BASH_SOURCE[0]}" "${tool}.stamp" | sha256sum | cut -c1-16)

# pack NAME REF CONFIG DIR: one image from a root file system.
pack() {
	local name=$1 ref=$2 config=$3 dir=$4 out=$5
	"${tool}" --rootfs "${dir}" --ref "${ref}" --config "${config}" --arch "${arch}" --epoch "${epoch}" --out "${out}.tmp" >/dev/null
	rm -rf "${out}"
	mv "${out}.tmp" "${out}"
	echo "${ref}" >"${out}/ref"
}

# --- glusterd2 ---------------------------------------------------------
# What glusterd2, its bricks, the FUSE client and its mount helper run:
# GD2's exec'd tools (mount, umount, mkfs.xfs, losetup via mount, the LVM
# tools), the helper's shell tools, and a shell for the shim. dash is
# /bin/sh, the mount helper's interpreter: without it mount -t glusterfs
# fails at once and says nothing (mount(8) gets the helper's exec error
# as exit status 1).
wanted=(glusterfs-server glusterfs-client xfsprogs util-linux mount lvm2 bash dash coreutils procps sed mawk grep findutils)
mapfile -t pkgs < <(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances "${wanted[@]}" 2>/dev/null | grep -v '^[ <]' | sort -u)
installed=()
for p in "${pkgs[@]}"; do
	v=$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "${p}" 2>/dev/null) || continue
	[[ ${v} == ii* ]] && installed+=("${p}=${v#ii }")
done
gd2hash=$( (echo "${self}"; sha256sum "${gd2bin}/glusterd2" "${gd2bin}/glustercli" | cut -d' ' -f1; printf '%s\n' "${installed[@]}") | sha256sum | cut -c1-12)
gd2ref="localhost/anthill-test/glusterd2:${gd2hash}"
gd2out="${cache}/glusterd2-${gd2hash}"
if [[ ! -f ${gd2out}/image.tar ]]; then
	start=$SECONDS
	fs=$(mktemp -d)
	trap 'rm -rf "${fs}"' EXIT
	# Debian 12's merged /usr: the packages' /bin, /sbin and /lib paths
	# land under usr/ through these links.
	mkdir -p "${fs}"/usr/{bin,sbin,lib,lib64}
	for d in bin sbin lib lib64; do ln -s "usr/${d}" "${fs}/${d}"; done
	list=$(mktemp)
	for p in "${installed[@]}"; do
		dpkg-query -L "${p%%=*}"
	done | grep '^/' | grep -Ev '^/(bin|sbin|lib|lib64)$|^/usr/share/(doc|man|info|locale|lintian|bug)(/|$)|^/\.$' | sort -u |
		while read -r f; do if [[ -e ${f} || -L ${f} ]]; then printf '%s\n' "${f#/}"; fi; done >"${list}"
	tar -C / --no-recursion -cf - -T "${list}" | tar -C "${fs}" --keep-directory-symlink -xf -
	rm -f "${list}"

	install -m 0755 "${gd2bin}/glusterd2" "${fs}/usr/sbin/glusterd2"
	install -m 0755 "${gd2bin}/glustercli" "${fs}/usr/sbin/glustercli"
	mkdir -p "${fs}"/etc/glusterd2 "${fs}"/var/lib/glusterd2 "${fs}"/var/log/glusterd2 \
		"${fs}"/run "${fs}"/tmp "${fs}"/dev "${fs}"/proc "${fs}"/sys "${fs}"/root "${fs}"/usr/local/sbin "${fs}"/var/lib/anthill
	chmod 1777 "${fs}/tmp"
	ln -sfn ../run "${fs}/var/run"
	# glusterd2's packaged configuration (scripts/gen-gd2conf.sh): the
	# same keys and paths as the nightly image's.
	cat >"${fs}/etc/glusterd2/glusterd2.toml" <<-'EOF'
		localstatedir = "/var/lib/glusterd2"
		logdir = "/var/log/glusterd2"
		logfile = "glusterd2.log"
		rundir = "/var/run/glusterd2"
		peeraddress = ":24008"
		clientaddress = ":24007"
	EOF
	printf 'root:x:0:0:root:/root:/bin/bash\n' >"${fs}/etc/passwd"
	printf 'root:x:0:\n' >"${fs}/etc/group"
	printf 'hosts: files dns\npasswd: files\ngroup: files\n' >"${fs}/etc/nsswitch.conf"
	# The nightly image's lvm.conf: no udev, no lvmetad, no monitoring
	# (a container has none of them).
	if [[ -f ${fs}/etc/lvm/lvm.conf ]]; then
		sed -i -E 's/^(\s*)#?\s*(udev_rules|udev_sync|use_lvmetad|obtain_device_list_from_udev|monitoring)\s*=.*/\1\2 = 0/' "${fs}/etc/lvm/lvm.conf"
	fi
	# The brick port shim. Since glusterfs 6.6 a brick started without a
	# port binds 24007, which is glusterd2's own (NOTES.md); in a pod the
	# bricks have the pod's network to themselves, so each takes the
	# first port from 49152 (glusterd's old brick range) that nothing in
	# the pod listens on, under a lock the bricks share.
	cat >"${fs}/usr/local/sbin/glusterfsd" <<-'EOF'
		#!/bin/bash
		# anthill test image: gives a brick a port of its own, then runs glusterfsd.
		real=/usr/sbin/glusterfsd
		for a in "$@"; do
			if [[ ${a} == --brick-name ]]; then
				exec 9>>/run/anthill-brick-ports.lock
				flock 9
				port=49152
				while (exec 8<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null || grep -qx "${port}" /run/anthill-brick-ports 2>/dev/null; do
					port=$((port + 1))
				done
				echo "${port}" >>/run/anthill-brick-ports
				exec 9>&-
				exec "${real}" "$@" --brick-port "${port}" --xlator-option "*-server.listen-port=${port}"
			fi
		done
		exec "${real}" "$@"
	EOF
	chmod 0755 "${fs}/usr/local/sbin/glusterfsd"
	path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/lib/${multiarch}/glusterfs"
	config=$(printf '{"Cmd":["/usr/sbin/glusterd2","--config=/etc/glusterd2/glusterd2.toml"],"Env":["PATH=%s"],"WorkingDir":"/","ExposedPorts":{"24007/tcp":{},"24008/tcp":{}},"Labels":{"org.opencontainers.image.title":"glusterd2 (anthill test image)","org.opencontainers.image.description":"glusterd2 54ce5f6f over Debian glusterfs-server, for anthill tests on a real node"}}' "${path}")
	pack glusterd2 "${gd2ref}" "${config}" "${fs}" "${gd2out}"
	rm -rf "${fs}"
	trap - EXIT
	echo "test-images: built ${gd2ref} in $((SECONDS - start))s ($(du -sh "${gd2out}/image.tar" | cut -f1))" >&2
fi
echo "glusterd2 ${gd2ref} ${gd2out}/image.tar"

# --- etcd --------------------------------------------------------------
etcdver=$("${cpbin}/etcd" --version 2>/dev/null | sed -n 's/^etcd Version: //p')
etcdhash=$( (echo "${self}"; sha256sum "${cpbin}/etcd" | cut -d' ' -f1) | sha256sum | cut -c1-12)
etcdref="localhost/anthill-test/etcd:${etcdver:-unknown}-${etcdhash}"
etcdout="${cache}/etcd-${etcdhash}"
if [[ ! -f ${etcdout}/image.tar ]]; then
	fs=$(mktemp -d)
	trap 'rm -rf "${fs}"' EXIT
	mkdir -p "${fs}"/usr/local/bin "${fs}"/var/lib/etcd "${fs}"/tmp "${fs}"/etc
	chmod 1777 "${fs}/tmp"
	install -m 0755 "${cpbin}/etcd" "${fs}/usr/local/bin/etcd"
	printf 'hosts: files dns\n' >"${fs}/etc/nsswitch.conf"
	pack etcd "${etcdref}" '{"Cmd":["/usr/local/bin/etcd"],"WorkingDir":"/var/lib/etcd","ExposedPorts":{"2379/tcp":{},"2380/tcp":{}}}' "${fs}" "${etcdout}"
	rm -rf "${fs}"
	trap - EXIT
fi
echo "etcd ${etcdref} ${etcdout}/image.tar"
