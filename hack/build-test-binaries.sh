#!/usr/bin/env bash
# Builds every binary the tests run, once, before the first package starts
# (make test runs it from hack/test.sh): no test compiles anything, so no
# test's limit meets a cold build while every package compiles at once
# (issue 48). Into DIR: the race-enabled operator, cmd/'s three programs side
# by side as make build lays out bin/, and the real node's pause program;
# into ${XDG_CACHE_HOME:-~/.cache}/anthill/releases/<version>/: the old
# releases the handover tests run, from the commits CHANGELOG.md records,
# reused while their commit stamp matches. Prints the variables the tests
# read them from (e2e/framework/prebuilt.go) as export lines for eval;
# build output goes to stderr. Takes GOFLAGS (-trimpath) from its caller.
# usage: hack/build-test-binaries.sh DIR
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
out=${1:?usage: hack/build-test-binaries.sh DIR}
out=$(cd "${out}" && pwd) || exit 1
releases="${XDG_CACHE_HOME:-$HOME/.cache}/anthill/releases"
# No DWARF: stack traces and race reports do not need it, and linking is a
# large share of the suite's CPU.
nodwarf=-ldflags=-w
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT

# release VERSION COMMIT builds the release's anthill from its commit's
# tree, without the race detector, unless the cache holds it.
release() {
	local version=$1 commit=$2 dest="${releases}/$1"
	if [[ -x ${dest}/anthill && $(cat "${dest}/commit" 2>/dev/null) == "${commit}" ]]; then
		return 0
	fi
	local src="${tmp}/${version}"
	mkdir -p "${src}" "${dest}" || return 1
	git archive --format=tar "${commit}" | tar -x -C "${src}" || { echo "release ${version}: git archive ${commit} failed" >&2; return 1; }
	(cd "${src}" && "${GO}" build "${nodwarf}" -o "${dest}/anthill.tmp" ./cmd/anthill) || { echo "release ${version}: build failed" >&2; return 1; }
	mv "${dest}/anthill.tmp" "${dest}/anthill" && echo "${commit}" >"${dest}/commit"
}

# The race-enabled operator shares no compiled package with the rest, so it
# builds beside them. The rest go one after another: the plain programs,
# then the releases, whose dependencies are mostly the same packages, each
# compiled once that way.
"${GO}" build -race "${nodwarf}" -o "${out}/anthill" ./cmd/anthill &
race=$!
(
	"${GO}" build "${nodwarf}" -o "${out}/bin/" ./cmd/anthill ./cmd/kubectl-gluster ./cmd/anthill-dev || exit 1
	CGO_ENABLED=0 "${GO}" build -ldflags='-s -w' -o "${out}/realnodepause" ./e2e/framework/realnodepause || exit 1
	# The handover tests run the newest release and the first
	# (e2e/handover_e2e_test.go); CHANGELOG.md lists them newest first.
	mapfile -t recorded < <(sed -nE 's/^## (v[0-9]+\.[0-9]+\.[0-9]+)[[:space:]].*\<commit ([0-9a-f]{40})\>.*/\1 \2/p' CHANGELOG.md)
	if [[ ${#recorded[@]} -eq 0 ]]; then
		echo "CHANGELOG.md records no release" >&2
		exit 1
	fi
	for r in "${recorded[0]}" "${recorded[-1]}"; do
		# shellcheck disable=SC2086 # "version commit"
		release ${r} || exit 1
	done
) &
rest=$!
status=0
wait "${race}" || status=1
wait "${rest}" || status=1
[[ ${status} -eq 0 ]] || exit 1
for v in ANTHILL_E2E_PREBUILT=1 ANTHILL_E2E_OPERATOR="${out}/anthill" \
	ANTHILL_E2E_ANTHILL="${out}/bin/anthill" ANTHILL_E2E_KUBECTL_GLUSTER="${out}/bin/kubectl-gluster" \
	ANTHILL_E2E_ANTHILL_DEV="${out}/bin/anthill-dev" ANTHILL_E2E_PAUSE="${out}/realnodepause" \
	ANTHILL_E2E_RELEASES="${releases}"; do
	printf 'export %s=%q\n' "${v%%=*}" "${v#*=}"
done
