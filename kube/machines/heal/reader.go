package heal

import (
	"context"
	"fmt"
	"sync"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/machines/gather"
)

// healReading is what one sync learned about one GD2 volume.
type healReading struct {
	vol       gd2.Volume
	redundant bool
	started   bool
	ok        bool
	err       error
	pending   int64
	split     int64
	down      int
	// bricks counts the bricks of the replica sets read.
	bricks int
	// For VolumeMetrics only (never the heal decision): GD2's bricks
	// status (bricksRead: it answered) and volume status (nil: not read
	// or failed) of a started volume.
	bricksStatus []gd2.BrickStatus
	bricksRead   bool
	status       *gd2.VolumeStatus
}

// read gathers the heal reading of every volume, at most workers volumes
// at a time. Results keep the order of vols. Per started volume and sync
// it costs bricks status and heal-info when the volume is redundant, and
// with Volumes set bricks status (the same call, not repeated) and volume
// status of every started volume.
func (s *Syncer) read(ctx context.Context, gc effects.GD2Reader, vols []gd2.Volume) []healReading {
	out := make([]healReading, len(vols))
	sem := make(chan struct{}, s.workers())
	var wg sync.WaitGroup
	metrics := s.Volumes != nil
	for i, v := range vols {
		out[i] = healReading{vol: v, redundant: gather.Redundant(v), started: v.State == gd2.VolumeStarted}
		if !out[i].started || (!out[i].redundant && !metrics) {
			continue
		}
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out[i].err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			if metrics {
				// A failed volume status leaves status nil: the volume
				// counts as down (GD2 answers it by mounting the volume).
				out[i].status, _ = gc.VolumeStatus(ctx, v.Name)
			}
			bs, err := gc.BricksStatus(ctx, v.Name)
			if err != nil {
				if out[i].redundant {
					out[i].err = fmt.Errorf("bricks status of %s: %w", v.Name, err)
				}
				return
			}
			out[i].bricksStatus, out[i].bricksRead = bs, true
			if !out[i].redundant {
				return
			}
			heal, err := gc.HealInfo(ctx, v.Name, gd2.HealInfoSummary)
			if err != nil {
				out[i].err = fmt.Errorf("heal info of %s: %w", v.Name, err)
				return
			}
			vv := gather.VolumeFacts(v, bs, heal)
			out[i].ok = true
			for _, sv := range vv.Subvols {
				if !sv.Replica {
					continue
				}
				for _, b := range sv.Bricks {
					out[i].bricks++
					if !b.Online || b.Pending < 0 {
						out[i].down++
						continue
					}
					out[i].pending += b.Pending
					out[i].split += b.SplitBrain
				}
			}
		})
	}
	wg.Wait()
	return out
}
