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
# With the argument csi it builds instead the three images of the
# GD2-era CSI file driver's pods (docs/testing.md, "The real CSI driver"):
#
#   glusterfs-csi-driver  the contract of the pinned driver image
#              (ENTRYPOINT /glusterfs-csi-driver, the FUSE client, whose
#              processes live in the node plugin's container): the driver
#              as `make csi-driver` builds it over the files of Debian's
#              glusterfs-client in place of CentOS 7's glusterfs-fuse.
#   csi-provisioner, csi-node-driver-registrar  the kubernetes-csi
#              sidecars at the versions kube/objects/images.go pins,
#              built from source (static, CGO off) with ENTRYPOINT
#              /<name> as upstream's images have it. The provisioner's
#              module comes from the module proxy; the proxy refuses
#              node-driver-registrar's (its v2 tags lack a /v2 module
#              path), so its source is the tag of a git clone named by
#              ANTHILL_CSI_REGISTRAR_SOURCE. Each binary is cached in
#              ${XDG_CACHE_HOME:-~/.cache}/anthill/csi-sidecars/<name>-<version>.
#
# usage: hack/build-test-images.sh [gluster|csi]
# Prints "<name> <reference> <archive>" for each image. Exits 2 with a
# one-line reason when an input is missing, so that a test can skip.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
set=${1:-gluster}
[[ ${set} == gluster || ${set} == csi ]] || { echo "usage: hack/build-test-images.sh [gluster|csi]" >&2; exit 2; }
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
if [[ ${set} == gluster ]]; then
	gd2bin=$("${root}/hack/build-glusterd2.sh" path 2>/dev/null) || absent "glusterd2 is not built: run make gd2"
	cpbin="${ANTHILL_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/controlplane/v1.37.2/bin}"
	[[ -x ${cpbin}/etcd ]] || absent "no etcd in ${cpbin}: run make controlplane"
else
	csibin=$("${root}/hack/build-csi-driver.sh" path 2>/dev/null) || absent "the CSI driver is not built: run make csi-driver"
fi

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

# closure PKG...: "name=version" of each installed package among PKG and
# everything they depend on.
closure() {
	local p v
	apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "$@" 2>/dev/null | grep -v '^[ <]' | sort -u |
		while read -r p; do
			v=$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "${p}" 2>/dev/null) || continue
			[[ ${v} == ii* ]] && echo "${p}=${v#ii }"
		done
}

# rootfs DIR NAME=VERSION...: a root file system in DIR holding the files
# of those installed packages (without documentation) as dpkg lists them,
# Debian 12's merged /usr, and the directories, users and name service
# switch a container expects.
rootfs() {
	local fs=$1 list p
	shift
	# The packages' /bin, /sbin and /lib paths land under usr/ through
	# these links.
	mkdir -p "${fs}"/usr/{bin,sbin,lib,lib64}
	for d in bin sbin lib lib64; do ln -s "usr/${d}" "${fs}/${d}"; done
	list=$(mktemp)
	for p in "$@"; do
		dpkg-query -L "${p%%=*}"
	done | grep '^/' | grep -Ev '^/(bin|sbin|lib|lib64)$|^/usr/share/(doc|man|info|locale|lintian|bug)(/|$)|^/\.$' | sort -u |
		while read -r f; do if [[ -e ${f} || -L ${f} ]]; then printf '%s\n' "${f#/}"; fi; done >"${list}"
	tar -C / --no-recursion -cf - -T "${list}" | tar -C "${fs}" --keep-directory-symlink -xf -
	rm -f "${list}"
	# Debian's alternatives (awk -> mawk, which mount.glusterfs runs to
	# parse backup-volfile-servers): links no package lists, made here for
	# each alternative whose chosen file the image holds.
	mkdir -p "${fs}/etc/alternatives"
	local alt name target link
	for alt in /etc/alternatives/*; do
		name=${alt##*/}
		target=$(readlink "${alt}") || continue
		[[ -e ${fs}${target} ]] || continue
		link=$(update-alternatives --query "${name}" 2>/dev/null | sed -n 's/^Link: //p') || continue
		[[ -n ${link} && -d ${fs}$(dirname "${link}") ]] || continue
		ln -sfn "${target}" "${fs}/etc/alternatives/${name}"
		ln -sfn "/etc/alternatives/${name}" "${fs}${link}"
	done
	mkdir -p "${fs}"/run "${fs}"/tmp "${fs}"/dev "${fs}"/proc "${fs}"/sys "${fs}"/root "${fs}"/usr/local/sbin
	chmod 1777 "${fs}/tmp"
	ln -sfn ../run "${fs}/var/run"
	printf 'root:x:0:0:root:/root:/bin/bash\n' >"${fs}/etc/passwd"
	printf 'root:x:0:\n' >"${fs}/etc/group"
	printf 'hosts: files dns\npasswd: files\ngroup: files\n' >"${fs}/etc/nsswitch.conf"
}

# The FUSE client and what its mount helper runs: mount and umount, the
# helper's shell tools, and dash, /bin/sh, the helper's interpreter:
# without it mount -t glusterfs fails at once and says nothing (mount(8)
# gets the helper's exec error as exit status 1).
fuse_client=(glusterfs-client util-linux mount bash dash coreutils procps sed mawk grep findutils)
path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

if [[ ${set} == csi ]]; then
	# --- glusterfs-csi-driver ----------------------------------------------
	mapfile -t installed < <(closure "${fuse_client[@]}")
	drvhash=$( (echo "${self}"; sha256sum "${csibin}" | cut -d' ' -f1; printf '%s\n' "${installed[@]}") | sha256sum | cut -c1-12)
	drvref="localhost/anthill-test/glusterfs-csi-driver:${drvhash}"
	drvout="${cache}/glusterfs-csi-driver-${drvhash}"
	if [[ ! -f ${drvout}/image.tar ]]; then
		start=$SECONDS
		fs=$(mktemp -d)
		trap 'rm -rf "${fs}"' EXIT
		rootfs "${fs}" "${installed[@]}"
		mkdir -p "${fs}"/var/log/glusterfs "${fs}"/var/lib/glusterd
		install -m 0755 "${csibin}" "${fs}/glusterfs-csi-driver"
		config=$(printf '{"Entrypoint":["/glusterfs-csi-driver"],"Env":["PATH=%s"],"WorkingDir":"/","Labels":{"org.opencontainers.image.title":"glusterfs-csi-driver (anthill test image)","org.opencontainers.image.description":"gluster-csi-driver 168a40e over Debian glusterfs-client, for anthill tests on a real node"}}' "${path}")
		pack glusterfs-csi-driver "${drvref}" "${config}" "${fs}" "${drvout}"
		rm -rf "${fs}"
		trap - EXIT
		echo "test-images: built ${drvref} in $((SECONDS - start))s ($(du -sh "${drvout}/image.tar" | cut -f1))" >&2
	fi
	echo "glusterfs-csi-driver ${drvref} ${drvout}/image.tar"

	# --- the kubernetes-csi sidecars ---------------------------------------
	pinned() { sed -n "s|.*/$1:\(v[0-9.]*\)\".*|\1|p" "${root}/kube/objects/images.go"; }
	sidecars="${XDG_CACHE_HOME:-${HOME}/.cache}/anthill/csi-sidecars"
	# sidecar NAME VERSION: builds (once) and packs the sidecar's image;
	# the source is in ${src} (a module's tree) for a build to do.
	sidecar() {
		local name=$1 version=$2 bin="${sidecars}/$1-$2/$1" hash ref out fs start
		if [[ ! -x ${bin} ]]; then
			start=$SECONDS
			command -v go >/dev/null || absent "no go on PATH"
			fetch_source "${name}" "${version}"
			mkdir -p "$(dirname "${bin}")"
			(
				cd "${src}"
				export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=${modflag}
				nice -n 10 go build -trimpath -ldflags "-X main.version=${version}" -o "${bin}.tmp" "./cmd/${name}"
			)
			mv "${bin}.tmp" "${bin}"
			rm -rf "${src}"
			echo "test-images: built ${name} ${version} in $((SECONDS - start))s" >&2
		fi
		hash=$( (echo "${self}"; sha256sum "${bin}" | cut -d' ' -f1) | sha256sum | cut -c1-12)
		ref="localhost/anthill-test/${name}:${version}-${hash}"
		out="${cache}/${name}-${hash}"
		if [[ ! -f ${out}/image.tar ]]; then
			fs=$(mktemp -d)
			mkdir -p "${fs}"/tmp "${fs}"/etc
			chmod 1777 "${fs}/tmp"
			install -m 0755 "${bin}" "${fs}/${name}"
			printf 'hosts: files dns\n' >"${fs}/etc/nsswitch.conf"
			pack "${name}" "${ref}" "$(printf '{"Entrypoint":["/%s"],"WorkingDir":"/"}' "${name}")" "${fs}" "${out}"
			rm -rf "${fs}"
		fi
		echo "${name} ${ref} ${out}/image.tar"
	}
	# fetch_source NAME VERSION: the sidecar's tree into ${src}, and the
	# GOFLAGS it builds with.
	fetch_source() {
		src=$(mktemp -d)
		case $1 in
		csi-provisioner)
			local mod=github.com/kubernetes-csi/external-provisioner/${2%%.*}@$2 dir
			dir=$(go mod download -json "${mod}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
			[[ -d ${dir} ]] || absent "the module proxy gave no ${mod}"
			cp -r "${dir}/." "${src}"
			chmod -R u+w "${src}"
			# A module's zip keeps vendor/modules.txt alone: build from
			# the module graph instead.
			rm -rf "${src}/vendor"
			modflag=-mod=mod
			;;
		csi-node-driver-registrar)
			local clone=${ANTHILL_CSI_REGISTRAR_SOURCE:-}
			[[ -n ${clone} ]] && git -C "${clone}" rev-parse --git-dir >/dev/null 2>&1 ||
				absent "no node-driver-registrar source: the module proxy does not serve it; set ANTHILL_CSI_REGISTRAR_SOURCE to a git clone of kubernetes-csi/node-driver-registrar"
			git -C "${clone}" rev-parse -q --verify "refs/tags/$2" >/dev/null || absent "${clone} has no tag $2"
			git -C "${clone}" archive "$2" | tar -x -C "${src}"
			modflag=-mod=vendor
			;;
		esac
	}
	for name in csi-provisioner csi-node-driver-registrar; do
		version=$(pinned "${name}")
		[[ -n ${version} ]] || { echo "test-images: no pinned version of ${name} in kube/objects/images.go" >&2; exit 1; }
		sidecar "${name}" "${version}"
	done
	exit 0
fi

# --- glusterd2 ---------------------------------------------------------
# What glusterd2, its bricks and the FUSE client run: the client's tools
# (above), GD2's exec'd tools (mkfs.xfs, losetup via mount, the LVM
# tools), and a shell for the shim.
mapfile -t installed < <(closure glusterfs-server xfsprogs lvm2 "${fuse_client[@]}")
gd2hash=$( (echo "${self}"; sha256sum "${gd2bin}/glusterd2" "${gd2bin}/glustercli" | cut -d' ' -f1; printf '%s\n' "${installed[@]}") | sha256sum | cut -c1-12)
gd2ref="localhost/anthill-test/glusterd2:${gd2hash}"
gd2out="${cache}/glusterd2-${gd2hash}"
if [[ ! -f ${gd2out}/image.tar ]]; then
	start=$SECONDS
	fs=$(mktemp -d)
	trap 'rm -rf "${fs}"' EXIT
	rootfs "${fs}" "${installed[@]}"

	install -m 0755 "${gd2bin}/glusterd2" "${fs}/usr/sbin/glusterd2"
	install -m 0755 "${gd2bin}/glustercli" "${fs}/usr/sbin/glustercli"
	mkdir -p "${fs}"/etc/glusterd2 "${fs}"/var/lib/glusterd2 "${fs}"/var/log/glusterd2 "${fs}"/var/lib/anthill
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
	config=$(printf '{"Cmd":["/usr/sbin/glusterd2","--config=/etc/glusterd2/glusterd2.toml"],"Env":["PATH=%s:/usr/lib/%s/glusterfs"],"WorkingDir":"/","ExposedPorts":{"24007/tcp":{},"24008/tcp":{}},"Labels":{"org.opencontainers.image.title":"glusterd2 (anthill test image)","org.opencontainers.image.description":"glusterd2 54ce5f6f over Debian glusterfs-server, for anthill tests on a real node"}}' "${path}" "${multiarch}")
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
