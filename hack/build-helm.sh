#!/usr/bin/env bash
# Builds helm from the Go module pinned in tools/helm into the per-user tool
# cache, once (about a minute and a half cold on two cores, longer when the
# modules are not yet downloaded), and again only when tools/helm/go.sum
# changes. Prints the binary's path last.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(cd "${root}/tools/helm" && GOFLAGS=-mod=mod go list -m -f '{{.Version}}' helm.sh/helm/v3)"
bin="${ANTHILL_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/tools}/helm/${version}"
mkdir -p "${bin}"
want="$(sha256sum "${root}/tools/helm/go.sum" | cut -d' ' -f1)"
if [[ -x "${bin}/helm" && "$(cat "${bin}/.helm.stamp" 2>/dev/null)" == "${want}" ]]; then
	echo "${bin}/helm"
	exit 0
fi
echo "helm: building helm ${version} (cold builds take minutes)" >&2
start=$SECONDS
(cd "${root}/tools/helm" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=${version}" \
	-o "${bin}/helm.tmp" helm.sh/helm/v3/cmd/helm)
mv "${bin}/helm.tmp" "${bin}/helm"
echo "${want}" > "${bin}/.helm.stamp"
echo "helm: built helm in $((SECONDS - start))s" >&2
echo "${bin}/helm"
