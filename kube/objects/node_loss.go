package objects

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// LostNodeTolerationSeconds is how long a Gluster pod tolerates the
// not-ready and unreachable taints before Kubernetes evicts it, unless the
// node or its template brings its own toleration for them. Kubernetes'
// default (300 s, added by the DefaultTolerationSeconds admission plugin)
// keeps a dead server's pod in place for five minutes before anything can
// happen; the peer is already known dead to GD2 after 30 s.
const LostNodeTolerationSeconds int64 = 60

// Taints the node lifecycle controller sets on a node that stops
// reporting.
const (
	taintNotReady    = "node.kubernetes.io/not-ready"
	taintUnreachable = "node.kubernetes.io/unreachable"
)

// lostNodeTolerations adds a NoExecute toleration with
// LostNodeTolerationSeconds for each of the not-ready and unreachable
// taints that tol does not already tolerate, so an admin's own choice wins.
func lostNodeTolerations(tol []corev1.Toleration) []corev1.Toleration {
	for _, key := range []string{taintNotReady, taintUnreachable} {
		covered := false
		for _, t := range tol {
			keyMatch := t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists)
			if keyMatch && (t.Effect == "" || t.Effect == corev1.TaintEffectNoExecute) {
				covered = true
				break
			}
		}
		if !covered {
			tol = append(tol, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr.To(LostNodeTolerationSeconds),
			})
		}
	}
	return tol
}
