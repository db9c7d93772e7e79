#!/usr/bin/env bash
# Fails when the generated code or CRD manifests differ from what
# hack/update-codegen.sh produces from the API types. It regenerates into the
# work tree, so a failing run leaves the fresh output there to commit.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

generated=(kube/apis kube/client manifests/crds)

"${root}/hack/update-codegen.sh"

drift="$(git status --porcelain --untracked-files=all -- "${generated[@]}")"
if [[ -n "${drift}" ]]; then
	echo "verify-codegen: generated files are out of date:" >&2
	echo "${drift}" >&2
	git --no-pager diff --stat -- "${generated[@]}" >&2
	echo "verify-codegen: run hack/update-codegen.sh and commit the result." >&2
	exit 1
fi
echo "verify-codegen: generated files are up to date" >&2
