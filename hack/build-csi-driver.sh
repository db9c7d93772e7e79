#!/usr/bin/env bash
# Builds the GD2-era CSI file driver (gluster/gluster-csi-driver at the
# commit container-contracts.md cites, driver name org.gluster.glusterfs)
# once into the per-user tool cache, for the tests that run the real driver
# (docs/testing.md, "The real CSI driver").
#
# The source is ../shared/third_party/gluster-csi-driver beside the
# repository (ANTHILL_CSI_THIRD_PARTY overrides it): the driver's tree as
# gluster-csi-driver-<commit>.tar.gz, the GD2 tree it builds against as
# glusterd2-<commit>.tar.gz (unpacked beside it and given a module file,
# since the module proxy refuses that module), and a go.mod/go.sum pinning
# the driver's Gopkg.lock to versions the proxy serves.
#
# One change to that go.mod, made here on a copy: json-iterator and
# modern-go/reflect2 are raised (see "bumps" below). With the pinned
# json-iterator 1.1.5 and reflect2 of 2018, Go 1.26 crashes (SIGSEGV in the
# runtime's map iterator) the first time json-iterator encodes a map: the
# old reflect2 walks map internals that newer runtimes laid out anew.
#
# The binary goes to
# ${XDG_CACHE_HOME:-~/.cache}/anthill/gluster-csi-driver/<commit>-<hash>/glusterfs-csi-driver,
# <hash> covering both tarballs, go.mod, go.sum and the bumps, and is reused
# while it is there. Prints the binary's path on stdout (only that).
#
# usage: hack/build-csi-driver.sh [build|path]
#   build  (default) build unless built, print the binary's path
#   path   print the binary's path when built; exit 1 otherwise
# Exits 2 with a one-line reason when the source is absent, so that a
# caller can skip what needs it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
action=${1:-build}
third="${ANTHILL_CSI_THIRD_PARTY:-${root}/../shared/third_party/gluster-csi-driver}"
GO=${GO:-go}

# Module versions raised over the third-party go.mod: reflect2 1.0.2 goes
# through the runtime's own map iterator; json-iterator 1.1.12 requires it.
bumps=(
	github.com/modern-go/reflect2@v1.0.2
	github.com/json-iterator/go@v1.1.12
)

absent() {
	echo "gluster-csi-driver: $*" >&2
	exit 2
}

[[ -d ${third} ]] || absent "no driver source: ${third} is absent (it holds the two tarballs, go.mod and go.sum; set ANTHILL_CSI_THIRD_PARTY)"
third="$(cd "${third}" && pwd)"
for f in go.mod go.sum; do
	[[ -f ${third}/${f} ]] || absent "no ${f} in ${third}"
done
one() {
	shopt -s nullglob
	local found=("${third}"/"$1"-*.tar.gz)
	shopt -u nullglob
	[[ ${#found[@]} -eq 1 ]] || absent "expected one $1-<commit>.tar.gz in ${third}, found ${#found[@]}"
	echo "${found[0]}"
}
driver_tarball=$(one gluster-csi-driver)
gd2_tarball=$(one glusterd2)
commit=$(basename "${driver_tarball}" .tar.gz)
commit=${commit#gluster-csi-driver-}

hash=$(
	{
		cat "${driver_tarball}" "${gd2_tarball}" "${third}/go.mod" "${third}/go.sum"
		printf '%s\n' "${bumps[@]}"
	} | sha256sum | cut -c1-12
)
cache="${XDG_CACHE_HOME:-${HOME}/.cache}/anthill/gluster-csi-driver/${commit}-${hash}"
bin="${cache}/glusterfs-csi-driver"

built() { [[ -x ${bin} ]]; }

case ${action} in
path)
	built || { echo "gluster-csi-driver: not built at ${bin}: run make csi-driver (hack/build-csi-driver.sh)" >&2; exit 1; }
	echo "${bin}"
	exit 0
	;;
build) ;;
*)
	echo "usage: hack/build-csi-driver.sh [build|path]" >&2
	exit 2
	;;
esac

if built; then
	echo "gluster-csi-driver: ${commit} up to date" >&2
	echo "${bin}"
	exit 0
fi

command -v "${GO}" >/dev/null || absent "no go on PATH"
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
tar -xzf "${driver_tarball}" -C "${work}"
tar -xzf "${gd2_tarball}" -C "${work}"
src="${work}/gluster-csi-driver"
gd2=$(find "${work}" -mindepth 1 -maxdepth 1 -type d -name 'glusterd2-*')
[[ -d ${src} && -n ${gd2} ]] || absent "the tarballs in ${third} do not unpack to gluster-csi-driver/ and glusterd2-<commit>/"
# The go.mod's replace names ../glusterd2-994aaa; the GD2 tree needs only
# its module line.
printf 'module github.com/gluster/glusterd2\n\ngo 1.12\n' >"${gd2}/go.mod"
cp "${third}/go.mod" "${third}/go.sum" "${src}/"
chmod u+w "${src}/go.mod" "${src}/go.sum"
echo "gluster-csi-driver: building ${commit} (about a minute on 2 cores)" >&2
mkdir -p "${cache}"
(
	cd "${src}"
	export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
	"${GO}" mod edit $(printf -- '-require=%s ' "${bumps[@]}")
	"${GO}" build -trimpath -o "${bin}.tmp" ./cmd/glusterfs
)
mv "${bin}.tmp" "${bin}"
echo "gluster-csi-driver: built ${commit} in $((SECONDS - start))s into ${bin}" >&2
echo "${bin}"
