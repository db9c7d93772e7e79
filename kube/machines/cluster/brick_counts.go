package cluster

import (
	"context"

	"go.uber.org/zap"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
)

// brickCounts reads how many bricks each of c's GD2 peers holds, for the
// scale-down order (states.ScaleDownOrder: fewest bricks first). It is
// nil when GD2 does not answer or c is external (anthill never scales
// it): the order is then by age alone. The volume list is the cluster's
// shared view (effects.PoolViews), the one the heal and disruption
// machines read, so it costs no read of its own most syncs; it may be a
// few intervals old, which is fine for choosing a node, since the drain
// re-reads GD2 live before it moves anything.
func (s *Syncer) brickCounts(ctx context.Context, c *operatorv1alpha1.GlusterCluster) objects.BrickCounts {
	if objects.IsExternal(c) {
		return nil
	}
	client, err := s.GD2.For(ctx, c)
	if err != nil {
		return nil
	}
	vols, err := s.GD2.Shared(c, client).ListVolumes(ctx, gd2.Filter{})
	if err != nil {
		s.Log.Log.Debug("reading GD2 volumes failed; scale-down orders nodes by age alone",
			zap.String(engine.LogNamespace, c.Namespace), zap.String(engine.LogName, c.Name), zap.Error(err))
		return nil
	}
	return objects.CountBricks(vols)
}
