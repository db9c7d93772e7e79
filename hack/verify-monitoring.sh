#!/usr/bin/env bash
# Fails when manifests/monitoring/prometheusrule.yaml differs from what
# monitoring/rules.go generates. Fix drift with:
#   go run ./cmd/anthill monitoring --write-manifests manifests/monitoring
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

go run ./cmd/anthill monitoring --write-manifests "$tmp"

if ! diff -u manifests/monitoring/prometheusrule.yaml "$tmp/prometheusrule.yaml"; then
	echo >&2
	echo "manifests/monitoring/prometheusrule.yaml is out of date with monitoring/rules.go." >&2
	echo "Regenerate and commit it:  go run ./cmd/anthill monitoring --write-manifests manifests/monitoring" >&2
	exit 1
fi
echo "manifests/monitoring is up to date."
