package upgrade

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/states"
)

// healedLive counts the volumes of c that status.volumes does not record
// Healthy (split-brain aside) but that a live read of bricks status and
// heal-info finds healed now (states.VolumeFacts.Healthy). A batch's
// nodes each read their own replica sets healed before going Online; the
// heal machine records the same a look later, and the next batch need not
// wait for that look. A volume that cannot be read counts as not healed.
func (s *Syncer) healedLive(ctx context.Context, c *operatorv1alpha1.GlusterCluster) int {
	if s.GD2 == nil {
		return 0
	}
	unhealthy := map[string]bool{}
	for _, v := range c.Status.Volumes {
		if st := v.State; st != string(states.HealHealthy) && st != string(states.HealSplitBrain) {
			unhealthy[v.Name] = true
		}
	}
	if len(unhealthy) == 0 {
		return 0
	}
	gc, err := s.GD2.For(ctx, c)
	if err != nil {
		return 0
	}
	vols, err := s.GD2.Shared(c, gc).ListVolumes(ctx, gd2.Filter{})
	if err != nil {
		return 0
	}
	// Each volume is two GD2 reads; read them side by side, as the heal
	// machine does, since the next batch waits for the slowest.
	var healed atomic.Int32
	var wg sync.WaitGroup
	sem := make(chan struct{}, liveReadWorkers)
	for _, v := range vols {
		if !unhealthy[v.Name] {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if facts, err := gather.ReadVolume(ctx, gc, v); err == nil && facts.Healthy() {
				healed.Add(1)
			}
		})
	}
	wg.Wait()
	return int(healed.Load())
}

// liveReadWorkers bounds the volumes healedLive reads at once.
const liveReadWorkers = 4
