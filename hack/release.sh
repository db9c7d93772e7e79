#!/usr/bin/env bash
# Builds everything a user installs from, from the checked-out commit, into
# OUT_DIR (default dist/release), and SHA256SUMS over all of it. It
# publishes nothing; docs/install.md installs from it.
#
#   VERSION=v1.2.3 hack/release.sh [OUT_DIR]
#
#   image/oci/                    the operator image as an OCI image layout:
#                                 one index over linux/amd64 and linux/arm64
#   image/anthill-oci.tar         the same layout as one tar: `ctr images import
#                                 --base-name REPO --digests` keeps its digest
#                                 (pinned manifests resolve; docs/install.md),
#                                 `kind load image-archive` its tag only
#   image/anthill-linux-ARCH.tar  one docker-archive per platform (docker load,
#                                 podman load, kind load image-archive)
#   image/digest, image/ref       the index's digest, and REPO:TAG@DIGEST
#   COMMIT                        the commit it was built from
#   anthill-X.Y.Z.tgz             the Helm chart, packaged
#   krew/                         kubectl-gluster archives and the krew manifest
#   olm/bundle/                   the OLM bundle: replaces and skipRange from
#                                 CHANGELOG.md, the operator image by digest
#   manifests/                    the kustomize manifests (manifests/default,
#                                 manifests/namespaced and their bases) and the
#                                 monitoring objects, the operator image by digest
#
# VERSION (make release VERSION=...) must be the tree's VERSION file: a
# release is made from a commit that carries its version. DRY_RUN=1 (what
# CI runs) builds the krew archives for Linux only and accepts an unreleased
# version: CHANGELOG.md must then have a "## Unreleased (VERSION)" heading.
# Without DRY_RUN the tree must be clean and CHANGELOG.md must not list
# VERSION as unreleased. Same commit, same files: the image's digest, the
# archives and the checksums do not change between two runs.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${root}/dist/release}"
version="$(cat "${root}/VERSION")"
cd "${root}"
start=${SECONDS}

[[ "${VERSION:-${version}}" == "${version}" ]] || { echo "release: VERSION=${VERSION} but the tree's VERSION file says ${version}: change the file (and CHANGELOG.md, Chart.yaml) first" >&2; exit 1; }
case ${version} in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "release: VERSION must look like v1.2.3, got ${version}" >&2; exit 1 ;;
esac
if [[ "${DRY_RUN:-}" == 1 ]]; then
	grep -q "^## Unreleased (${version})\$" CHANGELOG.md || { echo "release: CHANGELOG.md has no \"## Unreleased (${version})\" heading" >&2; exit 1; }
	krew_platforms="linux/amd64 linux/arm64"
else
	[[ -z "$(git status --porcelain --untracked-files=no)" ]] || { echo "release: the tree has uncommitted changes" >&2; exit 1; }
	if grep -q "^## Unreleased (${version})\$" CHANGELOG.md; then
		echo "release: CHANGELOG.md still lists ${version} as unreleased" >&2; exit 1
	fi
	krew_platforms="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
fi
chart_version="$(sed -n 's/^appVersion: //p' manifests/charts/anthill/Chart.yaml)"
[[ "${chart_version}" == "${version}" ]] || { echo "release: Chart.yaml appVersion ${chart_version}, VERSION ${version}" >&2; exit 1; }
repo=quay.io/gluster/anthill
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"

rm -rf "${out}"
mkdir -p "${out}/image"
out="$(cd "${out}" && pwd)"
echo "release: ${version} at $(git rev-parse HEAD) into ${out}" >&2
# The commit it was built from (-dirty: with uncommitted changes).
commit="$(git rev-parse HEAD)"
[[ -z "$(git status --porcelain --untracked-files=no)" ]] || commit="${commit}-dirty"
echo "${commit}" >"${out}/COMMIT"

step=${SECONDS}
ref="$(PLATFORMS="linux/amd64 linux/arm64" hack/build-image.sh "${out}/image" | tail -n1 | cut -d' ' -f1)"
rm -f "${out}/image/anthill" "${out}/image/anthill-linux-amd64" "${out}/image/anthill-linux-arm64"
digest="${ref#*@}"
[[ "${ref}" == "${repo}:${version}@sha256:"* ]] || { echo "release: the image builder printed ${ref}" >&2; exit 1; }
echo "${digest}" >"${out}/image/digest"
echo "${ref}" >"${out}/image/ref"
# The layout as one tar, fixed owners and times: the same layout, the same tar.
tar -C "${out}/image/oci" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${epoch}" -cf "${out}/image/anthill-oci.tar" .
echo "release: image ${ref} ($((SECONDS - step))s)" >&2

step=${SECONDS}
helm="$(hack/build-helm.sh | tail -n1)"
"${helm}" package manifests/charts/anthill --destination "${out}" >/dev/null
# helm package dates every entry now; repack it with the commit's time,
# fixed owners and sorted names (files only, as helm writes it), so the
# same commit gives the same chart archive.
chart="$(ls "${out}"/anthill-*.tgz)"
stage="$(mktemp -d)"
tar -xzmf "${chart}" -C "${stage}"
(cd "${stage}" && find anthill -type f | LC_ALL=C sort |
	tar --no-recursion --owner=0 --group=0 --numeric-owner --mtime="@${epoch}" -T - -cf - | gzip -n -9 >"${chart}")
rm -rf "${stage}"
PLATFORMS="${krew_platforms}" hack/krew-release.sh "${version}" "${out}/krew" >/dev/null
echo "release: chart and krew archives ($((SECONDS - step))s)" >&2

# The manifests and the OLM bundle run the image built above, by digest
# (REPO:TAG@DIGEST: the tag says which release, the digest what runs).
step=${SECONDS}
mkdir -p "${out}/manifests" "${out}/olm"
cp -r manifests/crds manifests/rbac manifests/operator manifests/admission manifests/monitoring manifests/default manifests/namespaced "${out}/manifests/"
cp -r manifests/olm/bundle "${out}/olm/"
pinned=0
while IFS= read -r f; do
	sed -i "s|${repo}:${version}\$|${ref}|" "${f}"
	pinned=$((pinned + 1))
done < <(grep -rl "${repo}:${version}\$" "${out}/manifests" "${out}/olm")
[[ ${pinned} -ge 2 ]] || { echo "release: pinned the image in ${pinned} files; want the Deployment and the CSV" >&2; exit 1; }
hack/olm.sh validate "${out}/olm/bundle" >/dev/null
echo "release: manifests and OLM bundle, image pinned in ${pinned} files ($((SECONDS - step))s)" >&2

(cd "${out}" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
echo "release: $(wc -l < "${out}/SHA256SUMS") files in $((SECONDS - start))s; checksums in ${out}/SHA256SUMS" >&2
