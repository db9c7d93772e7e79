#!/usr/bin/env bash
# Builds the operator image without a container engine: a static
# bin/anthill (version from VERSION, no build id, -trimpath) packed by
# tools/image into bin/image/oci (an OCI image layout) and
# bin/image/anthill.tar. The image builder itself is built from the Go
# module proxy into the per-user tool cache once, and again only when
# tools/image changes. Same commit, same image digest.
#   hack/build-image.sh [OUT_DIR]
# PLATFORMS="linux/amd64 linux/arm64" (the release's) builds one binary
# per platform into an image index in OUT_DIR/oci and one archive per
# platform, OUT_DIR/anthill-linux-ARCH.tar; the default is this machine's
# architecture (or GOARCH's) alone. A static Go binary cross-compiles, so
# each further platform costs one more go build.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${root}/bin/image}"
cache="${ANTHILL_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/tools}/image"
tool="${cache}/anthill-image"
mkdir -p "${cache}" "${out}"

want="$(cat "${root}/tools/image/go.sum" "${root}"/tools/image/*.go | sha256sum | cut -d' ' -f1)"
if [[ ! -x "${tool}" || "$(cat "${tool}.stamp" 2>/dev/null)" != "${want}" ]]; then
	echo "image: building the image builder (once; about 15 s cold)" >&2
	start=$SECONDS
	(cd "${root}/tools/image" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "${tool}.tmp" .)
	mv "${tool}.tmp" "${tool}"
	echo "${want}" > "${tool}.stamp"
	echo "image: built the image builder in $((SECONDS - start))s" >&2
fi

version="$(cat "${root}/VERSION")"
arch="${GOARCH:-$(go env GOARCH)}"
revision="$(git -C "${root}" rev-parse HEAD)"
if [[ -n "$(git -C "${root}" status --porcelain --untracked-files=no)" ]]; then
	revision="${revision}-dirty"
fi
epoch="${SOURCE_DATE_EPOCH:-$(git -C "${root}" log -1 --format=%ct)}"

platforms="${PLATFORMS:-linux/${arch}}"
binaries=()
for p in ${platforms}; do
	[[ "${p%/*}" == linux ]] || { echo "image: ${p}: the image is linux only" >&2; exit 1; }
	a="${p#*/}" bin="${out}/anthill"
	[[ "${platforms}" == "${p}" ]] || bin="${out}/anthill-linux-${a}"
	CGO_ENABLED=0 GOOS=linux GOARCH="${a}" go build -C "${root}" -trimpath \
		-ldflags "-s -w -buildid= -X github.com/gluster/anthill/cmd/internal/cli.Version=${version}" \
		-o "${bin}" ./cmd/anthill
	binaries+=(--binary "${a}=${bin}")
done
"${tool}" "${binaries[@]}" --out "${out}" --version "${version}" --revision "${revision}" --epoch "${epoch}"
