#!/usr/bin/env bash
# Builds the documentation site from docs/ into OUT_DIR (default
# dist/site), failing on any warning (a broken link, a missing page).
#
#   hack/docs.sh [OUT_DIR]
#
# Its tools, pinned like the others:
#   - mkdocs and pymdown-extensions (the Mermaid fence) are Debian's
#     packages, mkdocs and python3-pymdownx, of the machine's Debian release
#     (bookworm: 1.4.2 and 9.5). Installed with apt-get when missing and this
#     runs as root; otherwise it says what to install and stops.
#   - Mermaid, which draws the diagrams in the reader's browser, is the npm
#     package mermaid at MERMAID_VERSION, fetched once with `npm pack` into
#     the per-user tool cache and checked against MERMAID_SHA256; its
#     dist/mermaid.min.js is copied to docs/assets/ (ignored by git), so
#     `mkdocs serve` draws them too.
set -euo pipefail

MERMAID_VERSION=11.17.2
MERMAID_SHA256=6ad2f42c3fc26bbf9e45cbb6d11898972573ea52b33a5f4ff51952899f950ffd

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${root}/dist/site}"
cache="${ANTHILL_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/tools}/mermaid-${MERMAID_VERSION}"

# The extension must be importable by mkdocs' own Python (its #! line), not
# by whichever python3 is first on PATH.
have_mkdocs() {
	local mkdocs
	mkdocs="$(command -v mkdocs)" || return 1
	"$(sed -n '1s/^#! *//p' "${mkdocs}")" -c 'import pymdownx.superfences' 2>/dev/null
}
if ! have_mkdocs; then
	if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
		echo "docs: installing Debian's mkdocs and python3-pymdownx" >&2
		apt-get install -y -qq mkdocs python3-pymdownx >/dev/null 2>&1 ||
			{ apt-get update -qq && apt-get install -y -qq mkdocs python3-pymdownx >/dev/null; }
	fi
	have_mkdocs || {
		echo "docs: needs mkdocs and pymdown-extensions: sudo apt-get install mkdocs python3-pymdownx" >&2
		exit 1
	}
fi

if [[ ! -f "${cache}/mermaid.min.js" ]]; then
	command -v npm >/dev/null || { echo "docs: needs npm to fetch mermaid ${MERMAID_VERSION} once" >&2; exit 1; }
	echo "docs: fetching mermaid ${MERMAID_VERSION} (npm pack, once)" >&2
	tmp="$(mktemp -d)"
	trap 'rm -rf "${tmp}"' EXIT
	(cd "${tmp}" && npm pack --silent "mermaid@${MERMAID_VERSION}" >/dev/null)
	tgz="${tmp}/mermaid-${MERMAID_VERSION}.tgz"
	echo "${MERMAID_SHA256}  ${tgz}" | sha256sum -c --quiet - ||
		{ echo "docs: mermaid-${MERMAID_VERSION}.tgz does not have the pinned sha256" >&2; exit 1; }
	tar -xzf "${tgz}" -C "${tmp}" package/dist/mermaid.min.js package/LICENSE
	mkdir -p "${cache}"
	cp "${tmp}/package/LICENSE" "${cache}/LICENSE"
	cp "${tmp}/package/dist/mermaid.min.js" "${cache}/mermaid.min.js.tmp"
	mv "${cache}/mermaid.min.js.tmp" "${cache}/mermaid.min.js"
fi
mkdir -p "${root}/docs/assets"
cp "${cache}/mermaid.min.js" "${root}/docs/assets/mermaid.min.js"

cd "${root}"
mkdocs build --strict --site-dir "${out}"
# A diagram left as a code block means the fence or the script went missing.
grep -q '<div class="mermaid">' "${out}/fsm/node/index.html" && [[ -f "${out}/assets/mermaid.min.js" ]] ||
	{ echo "docs: the state diagrams are not set up for Mermaid (mkdocs.yml's mermaid fence, docs/assets)" >&2; exit 1; }
