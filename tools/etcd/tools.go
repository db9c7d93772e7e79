//go:build tools

// Package etcd pins the etcd server the test control plane stores its state in.
package etcd

import _ "go.etcd.io/etcd/server/v3"
