#!/usr/bin/env bash
# The OLM bundle in manifests/olm/bundle, made and checked by tools/olm
# (the Operator Framework's own types and validators, pinned there). The
# tool is built from the Go module proxy into the per-user tool cache once
# (about a minute cold) and again only when tools/olm changes.
#
#   hack/olm.sh generate          rewrite manifests/olm/bundle from manifests/ and VERSION
#   hack/olm.sh verify            fail when the committed bundle drifts, then validate it
#   hack/olm.sh validate DIR      validate the bundle in DIR
#   hack/olm.sh tool              print the tool's path (building it if needed)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${ANTHILL_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/tools}/olm"
tool="${cache}/olm"
bundle="${root}/manifests/olm/bundle"

build() {
	local want
	want="$(cat "${root}"/tools/olm/go.sum "${root}"/tools/olm/*.go | sha256sum | cut -d' ' -f1)"
	if [[ ! -x "${tool}" || "$(cat "${tool}.stamp" 2>/dev/null)" != "${want}" ]]; then
		echo "olm: building tools/olm (once; about a minute cold)" >&2
		mkdir -p "${cache}"
		(cd "${root}/tools/olm" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "${tool}.tmp" .)
		mv "${tool}.tmp" "${tool}"
		echo "${want}" > "${tool}.stamp"
	fi
}

case "${1:-}" in
generate)
	build
	"${tool}" generate "${root}" "${bundle}"
	;;
verify)
	build
	tmp="$(mktemp -d)"
	trap 'rm -rf "${tmp}"' EXIT
	"${tool}" generate "${root}" "${tmp}/bundle"
	if ! diff -r "${bundle}" "${tmp}/bundle" >/dev/null; then
		diff -r "${bundle}" "${tmp}/bundle" | head -20 >&2
		echo "manifests/olm/bundle is stale: run make generate" >&2
		exit 1
	fi
	"${tool}" validate "${bundle}"
	;;
validate)
	build
	"${tool}" validate "${2:?usage: hack/olm.sh validate DIR}"
	;;
tool)
	build
	echo "${tool}"
	;;
*)
	echo "usage: hack/olm.sh generate | verify | validate DIR | tool" >&2
	exit 2
	;;
esac
