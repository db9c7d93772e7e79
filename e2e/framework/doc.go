// Package framework starts a real Kubernetes control plane for anthill's
// integration and end-to-end tests: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok (simulated kubelets), all
// built from Go modules by hack/build-controlplane.sh. It listens on free
// loopback ports in a temporary directory, creates zone-labelled fake nodes,
// installs anthill's CRDs exactly as they ship in manifests/, hands out
// clients, and stops every process it started.
package framework
