// Package framework starts a real Kubernetes control plane for anthill's
// integration and end-to-end tests: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok (simulated kubelets), all
// built from Go modules by hack/build-controlplane.sh. It listens on free
// loopback ports in a temporary directory, creates zone-labelled fake nodes,
// installs anthill's CRDs exactly as they ship in manifests/, hands out
// clients, and stops every process it started. On request its API server
// audits the operator's requests to a webhook in the test process
// (audit.go), so that the end-to-end suite can prove every permission of
// the operator's RBAC is used (rbac_usage.go).
package framework
