#!/usr/bin/env bash
# Fails when manifests/monitoring/{prometheusrule,dashboards}.yaml differ
# from what kube/monitoring generates. Fix drift with:
#   go run ./cmd/anthill monitoring --write-manifests manifests/monitoring
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

go run ./cmd/anthill monitoring --write-manifests "$tmp"

drift=0
for f in prometheusrule.yaml dashboards.yaml; do
	diff -u "manifests/monitoring/$f" "$tmp/$f" || drift=1
done
if [ "$drift" -ne 0 ]; then
	echo >&2
	echo "manifests/monitoring is out of date with kube/monitoring (rules.go, dashboards.go)." >&2
	echo "Regenerate and commit it:  go run ./cmd/anthill monitoring --write-manifests manifests/monitoring" >&2
	exit 1
fi
echo "manifests/monitoring is up to date."
