#!/usr/bin/env bash
# Builds helm-unittest from the Go module pinned in tools/helm-unittest into
# the per-user tool cache, as a helm plugin in a plugin directory of its own
# (a minute or two cold on two cores, longer when the modules are not yet
# downloaded), and again only when tools/helm-unittest/go.sum changes.
# Prints the plugin directory last: run `HELM_PLUGINS=<it> helm unittest`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="${root}/tools/helm-unittest"
version="$(cd "${mod}" && GOFLAGS=-mod=mod go list -m -f '{{.Version}}' github.com/helm-unittest/helm-unittest)"
plugins="${ANTHILL_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/tools}/helm-unittest/${version}/plugins"
dir="${plugins}/unittest"
mkdir -p "${dir}"
want="$(sha256sum "${mod}/go.sum" | cut -d' ' -f1)"
if [[ -x "${dir}/untt" && -f "${dir}/plugin.yaml" && "$(cat "${dir}/.stamp" 2>/dev/null)" == "${want}" ]]; then
	echo "${plugins}"
	exit 0
fi
echo "helm-unittest: building ${version} (cold builds take minutes)" >&2
start=$SECONDS
(cd "${mod}" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X github.com/helm-unittest/helm-unittest/internal/build.version=${version#v}" \
	-o "${dir}/untt.tmp" github.com/helm-unittest/helm-unittest/cmd/helm-unittest)
mv "${dir}/untt.tmp" "${dir}/untt"
# The plugin manifest helm reads; the binary needs no install hook.
cat > "${dir}/plugin.yaml" <<YAML
name: unittest
version: "${version#v}"
usage: unit tests for a chart
description: helm-unittest ${version}, built from its Go module by anthill's hack/build-helm-unittest.sh
command: "\$HELM_PLUGIN_DIR/untt"
YAML
echo "${want}" > "${dir}/.stamp"
echo "helm-unittest: built in $((SECONDS - start))s" >&2
echo "${plugins}"
