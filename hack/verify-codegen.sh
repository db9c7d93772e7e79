#!/usr/bin/env bash
# Fails when the generated code or CRD manifests differ from what
# hack/update-codegen.sh produces from the API types, or when generated files
# are not committed. It regenerates into the work tree, so a failing run
# leaves the fresh output there to review and commit.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

# generated lists every generated file currently in the tree, with its hash.
generated() {
	{
		find kube/client -type f 2>/dev/null
		find kube/apis -type f -name 'zz_generated.*.go'
		grep -l '^    controller-gen.kubebuilder.io/version:' manifests/crds/*.yaml 2>/dev/null || true
	} | LC_ALL=C sort | xargs -r sha256sum
}

before="$(generated)"
"${root}/hack/update-codegen.sh"
after="$(generated)"

status=0
if [[ "${before}" != "${after}" ]]; then
	echo "verify-codegen: generated files are out of date:" >&2
	diff <(echo "${before}") <(echo "${after}") | sed -n 's/^[<>] [0-9a-f]*  //p' | LC_ALL=C sort -u >&2 || true
	status=1
fi
untracked="$(echo "${after}" | awk '{print $2}' | xargs -r git ls-files --others --exclude-standard --)"
if [[ -n "${untracked}" ]]; then
	echo "verify-codegen: generated files are not committed:" >&2
	echo "${untracked}" >&2
	status=1
fi
if [[ ${status} -ne 0 ]]; then
	echo "verify-codegen: run hack/update-codegen.sh and commit the result." >&2
	exit 1
fi
echo "verify-codegen: generated files are up to date" >&2
