#!/usr/bin/env bash
# Builds glusterd2 and glustercli (gluster/glusterd2, the 2019 GD2 that
# anthill drives) once into the per-user tool cache, for the tests and the
# sandbox that run real GD2 (docs/testing.md, "Real glusterd2").
#
# The source is ../shared/third_party/glusterd2 beside the repository
# (ANTHILL_GD2_THIRD_PARTY overrides it): the upstream tree at one commit
# as glusterd2-<commit>.tar.gz, a go.mod/go.sum pinning its dependencies to
# versions the module proxy serves, and patches/*.patch. A user with an
# upstream clone sets ANTHILL_GD2_SOURCE to it: its HEAD replaces the
# tarball; go.mod, go.sum and the patches still come from the third-party
# directory. Every patch is applied: init order for Go >= 1.21 (else the
# binary exits at start) and the brick-op XDR for glusterfs >= 7 (else heal
# answers 500).
#
# The binaries go to ${XDG_CACHE_HOME:-~/.cache}/anthill/glusterd2/<commit>-<hash>/bin,
# <hash> covering the patches, go.mod and go.sum, and are reused while
# both are there. Prints the bin directory last.
#
# usage: hack/build-glusterd2.sh [build|path]
#   build  (default) build unless built, print the bin directory
#   path   print the bin directory when built; exit 1 otherwise
# Exits 2 with a one-line reason when the source is absent, so that a
# caller can skip what needs it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
action=${1:-build}
third="${ANTHILL_GD2_THIRD_PARTY:-${root}/../shared/third_party/glusterd2}"
GO=${GO:-go}

absent() {
	echo "glusterd2: $*" >&2
	exit 2
}

[[ -d ${third} ]] || absent "no GD2 source: ${third} is absent (it holds the tarball, go.mod, go.sum and patches; set ANTHILL_GD2_THIRD_PARTY)"
third="$(cd "${third}" && pwd)"
for f in go.mod go.sum; do
	[[ -f ${third}/${f} ]] || absent "no ${f} in ${third}"
done
shopt -s nullglob
patches=("${third}"/patches/*.patch)
shopt -u nullglob

if [[ -n ${ANTHILL_GD2_SOURCE:-} ]]; then
	[[ -d ${ANTHILL_GD2_SOURCE}/.git || -f ${ANTHILL_GD2_SOURCE}/.git ]] ||
		absent "ANTHILL_GD2_SOURCE=${ANTHILL_GD2_SOURCE} is not a git clone of gluster/glusterd2"
	commit=$(git -C "${ANTHILL_GD2_SOURCE}" rev-parse --short=8 HEAD)
	version=$(git -C "${ANTHILL_GD2_SOURCE}" describe --tags --match 'v[0-9]*' 2>/dev/null || echo "v0-${commit}")
	tarball=""
else
	shopt -s nullglob
	tarballs=("${third}"/glusterd2-*.tar.gz)
	shopt -u nullglob
	[[ ${#tarballs[@]} -eq 1 ]] || absent "expected one glusterd2-<commit>.tar.gz in ${third}, found ${#tarballs[@]}"
	tarball=${tarballs[0]}
	commit=$(basename "${tarball}" .tar.gz)
	commit=${commit#glusterd2-}
	version="v0-${commit}"
fi

hash=$(cat "${patches[@]}" "${third}/go.mod" "${third}/go.sum" | sha256sum | cut -c1-12)
cache="${XDG_CACHE_HOME:-${HOME}/.cache}/anthill/glusterd2/${commit}-${hash}"
bin="${cache}/bin"

built() { [[ -x ${bin}/glusterd2 && -x ${bin}/glustercli ]]; }

case ${action} in
path)
	built || { echo "glusterd2: not built in ${bin}: run make gd2 (hack/build-glusterd2.sh)" >&2; exit 1; }
	echo "${bin}"
	exit 0
	;;
build) ;;
*)
	echo "usage: hack/build-glusterd2.sh [build|path]" >&2
	exit 2
	;;
esac

if built; then
	echo "glusterd2: ${commit} up to date" >&2
	echo "${bin}"
	exit 0
fi

command -v "${GO}" >/dev/null || absent "no go on PATH"
command -v gcc >/dev/null || absent "no gcc: glusterd2 builds with cgo"
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
src="${work}/glusterd2"
mkdir -p "${src}"
if [[ -n ${tarball} ]]; then
	tar -xzf "${tarball}" -C "${src}" --strip-components=1
else
	git -C "${ANTHILL_GD2_SOURCE}" archive HEAD | tar -x -C "${src}"
fi
cp "${third}/go.mod" "${third}/go.sum" "${src}/"
chmod u+w "${src}/go.mod" "${src}/go.sum"
for p in "${patches[@]}"; do
	patch -s -p1 -d "${src}" <"${p}" || { echo "glusterd2: patch $(basename "${p}") does not apply to ${commit}" >&2; exit 1; }
done
echo "glusterd2: building ${commit} with ${#patches[@]} patches (about a minute on 2 cores)" >&2
pkg=github.com/gluster/glusterd2
ldflags="-X ${pkg}/version.GlusterdVersion=${version} -X ${pkg}/version.GitSHA=${commit}"
mkdir -p "${bin}"
(
	cd "${src}"
	export CGO_ENABLED=1 GOFLAGS=-mod=mod GOTOOLCHAIN=local
	"${GO}" build -trimpath -tags plugins -ldflags "${ldflags}" -o "${bin}/glusterd2.tmp" ./glusterd2
	"${GO}" build -trimpath -ldflags "${ldflags}" -o "${bin}/glustercli.tmp" ./glustercli
)
mv "${bin}/glustercli.tmp" "${bin}/glustercli"
mv "${bin}/glusterd2.tmp" "${bin}/glusterd2"
echo "glusterd2: built ${commit} in $((SECONDS - start))s into ${bin}" >&2
echo "${bin}"
