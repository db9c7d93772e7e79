// Package kubelink ties the GD2 simulator's hosts to Kubernetes pods: a
// host exists and is alive exactly while its pod is Ready. It lives apart
// from package sim so the simulator core builds and tests without
// client-go.
package kubelink
