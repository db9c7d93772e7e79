//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/effects"
)

// drainTimeline watches a drain from GD2's side, as often as GD2 answers:
// when each brick of the drained peer left it, when the replica set it
// left healed again, and whether any replica set ever had two bricks in
// one zone. The moves' own start times come from the ledger or from the
// simulator's record of destructive calls; the timeline gives their ends.
type drainTimeline struct {
	g *gd2.Client
	// whole, when set, says per replica set of a volume whether every
	// brick holds its data (the simulator's own account): heal-info reads
	// 0 right after a replace-brick while the new brick is empty, so a
	// set counts healed only when both say so.
	whole  func(volume string) ([]bool, error)
	source string
	vols   []string

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}

	mu sync.Mutex
	// left and healed are, per brick of source ("volume path"), the first
	// sample that saw it on another peer, and the first after that which
	// saw its replica set healed.
	left, healed map[string]time.Time
	// zoneBreaks are the zone-safety violations seen, at most a few.
	zoneBreaks []string
	samples    int
}

// startDrainTimeline starts sampling vols for the bricks of source; whole
// is the simulator's account of which replica sets hold their data
// (sim.Simulator.WholeSets).
func startDrainTimeline(g *gd2.Client, whole func(string) ([]bool, error), source string, vols ...string) *drainTimeline {
	d := &drainTimeline{
		g: g, whole: whole, source: source, vols: vols,
		stop: make(chan struct{}), done: make(chan struct{}),
		left: map[string]time.Time{}, healed: map[string]time.Time{},
	}
	mine := map[string]bool{}
	go func() {
		defer close(d.done)
		for {
			d.sample(mine)
			select {
			case <-d.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return d
}

// sample reads GD2 once. mine holds the bricks seen on source so far.
func (d *drainTimeline) sample(mine map[string]bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	peers, err := d.g.ListPeers(ctx, gd2FilterAll)
	if err != nil {
		return
	}
	zone := map[string]string{}
	for _, p := range peers {
		zone[p.ID] = p.Zone()
		if orig := p.Metadata[effects.PeerMetaZone]; orig != "" {
			zone[p.ID] = orig
		}
	}
	now := time.Now()
	for _, name := range d.vols {
		v, err := d.g.GetVolume(ctx, name)
		if err != nil {
			continue
		}
		hi, err := d.g.HealInfo(ctx, name, gd2.HealInfoSummary)
		if err != nil {
			continue
		}
		whole, err := d.whole(name)
		if err != nil || len(whole) != len(v.Subvols) {
			continue
		}
		pending := map[string]int64{}
		for _, b := range hi {
			n := int64(-1)
			for _, c := range []*int64{b.EntriesInHealPending, b.TotalEntries} {
				if c != nil {
					n = *c
					break
				}
			}
			pending[b.Name] = n
		}
		d.mu.Lock()
		d.samples++
		for i, sv := range v.Subvols {
			healed := whole[i]
			seen := map[string]string{}
			for _, b := range sv.Bricks {
				if n, ok := pending[b.Host+":"+b.Path]; !ok || n != 0 {
					healed = false
				}
				if prev, ok := seen[zone[b.PeerID]]; ok && len(d.zoneBreaks) < 5 {
					d.zoneBreaks = append(d.zoneBreaks, fmt.Sprintf("%s: replica set %s of %s has bricks on %s and %s, both in zone %s",
						now.Format(time.RFC3339Nano), sv.Name, name, prev, b.PeerID, zone[b.PeerID]))
				}
				seen[zone[b.PeerID]] = b.PeerID
			}
			for _, b := range sv.Bricks {
				key := name + " " + b.Path
				if b.PeerID == d.source {
					mine[key] = true
					continue
				}
				if !mine[key] {
					continue
				}
				if _, ok := d.left[key]; !ok {
					d.left[key] = now
				}
				if _, ok := d.healed[key]; !ok && healed {
					d.healed[key] = now
				}
			}
		}
		d.mu.Unlock()
	}
}

// finish stops sampling and returns the bricks' times and the zone-safety
// violations seen.
func (d *drainTimeline) finish() (left, healed map[string]time.Time, zoneBreaks []string, samples int) {
	d.stopOnce.Do(func() { close(d.stop) })
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.left, d.healed, d.zoneBreaks, d.samples
}

// replaceBrickKey is the timeline's key ("volume path") of a simulator
// ReplaceBrick call's target ("<volume> <src-peerid>:<src-path>").
func replaceBrickKey(target string) string {
	vol, rest, _ := strings.Cut(target, " ")
	_, path, _ := strings.Cut(rest, ":")
	return vol + " " + path
}
