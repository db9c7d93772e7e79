#!/usr/bin/env bash
# Runs the unit tests with coverage and compares each package with its
# floor in hack/coverage-floor.txt. Prints one line per package. Given a
# file, reads the coverage of a `go test -cover` run there instead (make
# test's, hack/test.sh), of the unit packages only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
out="$(mktemp)"
units="$(mktemp)"
trap 'rm -f "${out}" "${units}"' EXIT
hack/unit-packages.sh >"${units}"
if [[ $# -gt 0 ]]; then
	cp "$1" "${out}"
else
	# shellcheck disable=SC2046
	go test -race -cover $(cat "${units}") | tee "${out}"
fi
awk -v floors="hack/coverage-floor.txt" -v units="${units}" '
BEGIN {
	while ((getline line < floors) > 0) {
		if (line ~ /^#/ || line == "") continue
		split(line, f, " "); floor[f[1]] = f[2]
	}
	while ((getline line < units) > 0) unit[line] = 1
}
/coverage: [0-9.]+%/ {
	pkg = ($1 == "ok") ? $2 : $1
	if (pkg ~ /\/kube\/client\// || !(pkg in unit)) next
	for (i = 1; i <= NF; i++) if ($i == "coverage:") { pct = $(i + 1); sub("%", "", pct) }
	seen[pkg] = 1
	if (!(pkg in floor)) { printf "coverage: %s has no floor in %s (it is at %s%%): add a line\n", pkg, floors, pct; bad = 1; next }
	if (pct + 0 < floor[pkg]) { printf "coverage: %s fell to %s%%, below its floor of %s%%\n", pkg, pct, floor[pkg]; bad = 1; next }
	printf "coverage: %s %s%% (floor %s%%)\n", pkg, pct, floor[pkg]
}
END {
	for (p in floor) if (!(p in seen)) { printf "coverage: %s has a floor but no coverage was measured (gone, or its tests no longer build?)\n", p; bad = 1 }
	exit bad
}' "${out}"
