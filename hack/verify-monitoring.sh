#!/usr/bin/env bash
# Fails when manifests/monitoring (kustomization, ServiceMonitor,
# PrometheusRule, dashboards) or the chart's rule groups and dashboards
# (manifests/charts/anthill/templates/_prometheusrule_groups.tpl,
# manifests/charts/anthill/files/dashboards) differ
# from what kube/monitoring generates. Fix drift with make generate, or:
#   go run ./cmd/anthill monitoring --write-manifests manifests/monitoring
#   go run ./cmd/anthill monitoring --write-chart manifests/charts/anthill
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

go run ./cmd/anthill monitoring --write-manifests "$tmp/monitoring"
mkdir -p "$tmp/chart/templates"
go run ./cmd/anthill monitoring --write-chart "$tmp/chart"

drift=0
for f in kustomization.yaml servicemonitor.yaml prometheusrule.yaml dashboards.yaml; do
	diff -u "manifests/monitoring/$f" "$tmp/monitoring/$f" || drift=1
done
diff -u manifests/charts/anthill/templates/_prometheusrule_groups.tpl "$tmp/chart/templates/_prometheusrule_groups.tpl" || drift=1
diff -ru manifests/charts/anthill/files/dashboards "$tmp/chart/files/dashboards" || drift=1
if [ "$drift" -ne 0 ]; then
	echo >&2
	echo "manifests/monitoring or the chart's rule groups are out of date with kube/monitoring (rules.go, dashboards.go, manifests.go)." >&2
	echo "Regenerate and commit them: make generate" >&2
	exit 1
fi
echo "manifests/monitoring and the chart's rule groups are up to date."
