package objects

import operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"

// MaxParallelMoves is c's spec.drainPolicy.maxParallelMoves: the most
// bricks of one draining node moving or healing at once. Unset or below 1
// (an object the API server's defaulting never saw) is 1, the API's
// default: one brick at a time.
func MaxParallelMoves(c *operatorv1alpha1.GlusterCluster) int {
	if c == nil || c.Spec.DrainPolicy == nil {
		return 1
	}
	return max(int(c.Spec.DrainPolicy.MaxParallelMoves), 1)
}
