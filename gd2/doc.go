// Package gd2 is a context-first client for the glusterd2 REST API: JWT
// authentication, TLS, typed errors that keep the HTTP status and GD2's error
// list, and retries only where they are safe. It imports nothing from
// Kubernetes.
package gd2
