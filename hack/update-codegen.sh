#!/usr/bin/env bash
# Regenerates everything derived from the API types in kube/apis:
#   - deep-copy functions (zz_generated.deepcopy.go beside the types),
#   - the typed clientset, listers and informers under kube/client,
#   - the CRD manifests (OpenAPI v3 schema, CEL rules) under manifests/crds,
#     each serving v1alpha1 and v1beta1 (stored) with one schema: the v1beta1
#     entry is a copy of the v1alpha1 one that controller-gen writes, made by
#     tools/codegen/crdversions (see docs/api.md, "Versions").
# The generators are built from the separate module tools/codegen into a
# per-user cache outside the repository, and rebuilt only when that module's
# go.sum or the Go version changes.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
export GOWORK=off

module="github.com/gluster/anthill"
bin="${ANTHILL_CODEGEN_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/anthill/codegen/bin}"
boilerplate="${root}/hack/boilerplate.go.txt"
# API packages, relative to kube/apis; every one gets all generators.
groups=(operator/v1alpha1)

build_tools() {
	local stamp="${bin}/.stamp" want
	want="$( (sha256sum "${root}/tools/codegen/go.sum" "${root}"/tools/codegen/crdversions/*.go; go version) | sha256sum | cut -d' ' -f1)"
	if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
		return 0
	fi
	echo "codegen: building generators into ${bin}" >&2
	mkdir -p "${bin}"
	(cd "${root}/tools/codegen" && GOBIN="${bin}" go install \
		k8s.io/code-generator/cmd/deepcopy-gen \
		k8s.io/code-generator/cmd/client-gen \
		k8s.io/code-generator/cmd/lister-gen \
		k8s.io/code-generator/cmd/informer-gen \
		sigs.k8s.io/controller-tools/cmd/controller-gen \
		./crdversions)
	echo "${want}" > "${stamp}"
}

build_tools

pkgs=()
inputs=()
for g in "${groups[@]}"; do
	pkgs+=("${module}/kube/apis/${g}")
	inputs+=(--input "${g}")
done

echo "codegen: deepcopy" >&2
find kube/apis -name zz_generated.deepcopy.go -delete
"${bin}/deepcopy-gen" \
	--go-header-file "${boilerplate}" \
	--output-file zz_generated.deepcopy.go \
	"${pkgs[@]}"

# kube/client holds generated code only, so it is rebuilt from scratch and a
# removed type leaves no stale files behind.
rm -rf kube/client

echo "codegen: clientset" >&2
"${bin}/client-gen" \
	--go-header-file "${boilerplate}" \
	--output-dir kube/client/clientset \
	--output-pkg "${module}/kube/client/clientset" \
	--clientset-name versioned \
	--input-base "${module}/kube/apis" \
	"${inputs[@]}"

echo "codegen: listers" >&2
"${bin}/lister-gen" \
	--go-header-file "${boilerplate}" \
	--output-dir kube/client/listers \
	--output-pkg "${module}/kube/client/listers" \
	"${pkgs[@]}"

echo "codegen: informers" >&2
"${bin}/informer-gen" \
	--go-header-file "${boilerplate}" \
	--output-dir kube/client/informers \
	--output-pkg "${module}/kube/client/informers" \
	--versioned-clientset-package "${module}/kube/client/clientset/versioned" \
	--listers-package "${module}/kube/client/listers" \
	"${pkgs[@]}"

echo "codegen: CRDs" >&2
# Only controller-gen's own files: manifests/crds also holds hand-written
# files such as its kustomization.
grep -l --null '^    controller-gen.kubebuilder.io/version:' manifests/crds/*.yaml 2>/dev/null | xargs -0 rm -f
"${bin}/controller-gen" \
	crd \
	paths=./kube/apis/... \
	output:crd:dir=./manifests/crds
grep -l --null '^    controller-gen.kubebuilder.io/version:' manifests/crds/*.yaml | xargs -0 "${bin}/crdversions"

echo "codegen: done" >&2
