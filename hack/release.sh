#!/usr/bin/env bash
# Builds everything a release ships, from the checked-out commit, into
# OUT_DIR (default dist/release): the operator image (OCI layout and
# tarball), the Helm chart package, the kubectl-gluster archives with their
# krew manifest, the plain manifests (CRDs, RBAC, Deployment, monitoring),
# and SHA256SUMS over all of it. It publishes nothing.
#
#   hack/release.sh [OUT_DIR]
#
# DRY_RUN=1 (what CI runs) builds the krew archive for this machine's
# platform only and accepts an unreleased version: CHANGELOG.md must then
# have a "## Unreleased (VERSION)" heading. Without DRY_RUN the tree must
# be clean and CHANGELOG.md must not list VERSION as unreleased.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${root}/dist/release}"
version="$(cat "${root}/VERSION")"
cd "${root}"

case ${version} in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "release: VERSION must look like v1.2.3, got ${version}" >&2; exit 1 ;;
esac
if [[ "${DRY_RUN:-}" == 1 ]]; then
	grep -q "^## Unreleased (${version})\$" CHANGELOG.md || { echo "release: CHANGELOG.md has no \"## Unreleased (${version})\" heading" >&2; exit 1; }
	platforms="$(go env GOOS)/$(go env GOARCH)"
else
	[[ -z "$(git status --porcelain --untracked-files=no)" ]] || { echo "release: the tree has uncommitted changes" >&2; exit 1; }
	if grep -q "^## Unreleased (${version})\$" CHANGELOG.md; then
		echo "release: CHANGELOG.md still lists ${version} as unreleased" >&2; exit 1
	fi
	platforms="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
fi
chart_version="$(sed -n 's/^appVersion: //p' manifests/charts/anthill/Chart.yaml)"
[[ "${chart_version}" == "${version}" ]] || { echo "release: Chart.yaml appVersion ${chart_version}, VERSION ${version}" >&2; exit 1; }

rm -rf "${out}"
mkdir -p "${out}"
echo "release: ${version} at $(git rev-parse HEAD) into ${out}" >&2
hack/build-image.sh "${out}/image"
helm="$(hack/build-helm.sh | tail -n1)"
"${helm}" package manifests/charts/anthill --destination "${out}" >/dev/null
PLATFORMS="${platforms}" hack/krew-release.sh "${version}" "${out}/krew"
mkdir -p "${out}/manifests"
cp -r manifests/crds manifests/rbac manifests/operator manifests/monitoring manifests/default "${out}/manifests/"
(cd "${out}" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
echo "release: $(wc -l < "${out}/SHA256SUMS") files; checksums in ${out}/SHA256SUMS" >&2
