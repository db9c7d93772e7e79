// Package monitoring holds anthill's Prometheus alerts and recording
// rules as Go data, over the operator's metrics and the machines' state
// constants, so a renamed state or metric cannot leave a stale alert.
// `anthill monitoring --write-manifests manifests/monitoring` renders them
// as a PrometheusRule (run by `make generate`, drift-checked by
// `make verify-generate`); promtool checks and unit-tests them.
package monitoring
