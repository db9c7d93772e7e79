// Package kube is where anthill meets Kubernetes: the CRD Go types and their
// generated clientset, listers and informers (apis/, client/), the single
// informer-driven dispatcher that advances every machine, snapshot building,
// the status writer, Events, object builders, leader election, and the
// operator's HTTP endpoints (/healthz, /readyz, /metrics).
package kube
