//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluster/anthill/gd2"
)

// peerTimeline samples GD2's peer list every 50 ms until stopped. It keeps
// every change of the set of offline peers, with when it was first seen,
// and per peer how long GD2 listed it offline. The assertions of the
// upgrade tests and the lower bounds of the upgrade benchmarks are read
// from it once it is stopped.
type peerTimeline struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples int
	changes []offlineSet
	down    map[string]time.Duration
	zone    map[string]string
}

// offlineSet is the set of peers GD2 listed offline from at on, until the
// next change.
type offlineSet struct {
	at    time.Time
	peers []string
}

func startPeerTimeline(g *gd2.Client) *peerTimeline {
	ctx, cancel := context.WithCancel(context.Background())
	m := &peerTimeline{cancel: cancel, done: make(chan struct{}), down: map[string]time.Duration{}, zone: map[string]string{}}
	go func() {
		defer close(m.done)
		last := time.Now()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			peers, err := g.ListPeers(ctx, gd2.Filter{})
			now := time.Now()
			if err != nil {
				last = now
				continue
			}
			var off []string
			m.mu.Lock()
			m.samples++
			for _, p := range peers {
				m.zone[p.ID] = p.Zone()
				if !p.Online {
					m.down[p.ID] += now.Sub(last)
					off = append(off, p.ID)
				}
			}
			slices.Sort(off)
			if n := len(m.changes); n == 0 || !slices.Equal(m.changes[n-1].peers, off) {
				m.changes = append(m.changes, offlineSet{at: now, peers: off})
			}
			m.mu.Unlock()
			last = now
		}
	}()
	return m
}

// stop ends sampling; safe to call more than once.
func (m *peerTimeline) stop() {
	m.cancel()
	<-m.done
}

// downtime is, per peer that was ever offline, how long GD2 listed it so.
func (m *peerTimeline) downtime() map[string]time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.down)
}

// timelineWorst is the worst instant the timeline saw by some measure.
type timelineWorst struct {
	count int
	at    time.Time
	what  string
}

func (w timelineWorst) String() string {
	return fmt.Sprintf("%d at %s (%s)", w.count, w.at.Format("15:04:05.000"), w.what)
}

// worstReplicaSet is the largest number of bricks of one replica set that
// were offline at the same instant (sets: name → peer id of each brick).
func (m *peerTimeline) worstReplicaSet(sets map[string][]string) timelineWorst {
	m.mu.Lock()
	defer m.mu.Unlock()
	var w timelineWorst
	for _, c := range m.changes {
		for name, peers := range sets {
			down := 0
			for _, p := range peers {
				if slices.Contains(c.peers, p) {
					down++
				}
			}
			if down > w.count {
				w = timelineWorst{count: down, at: c.at, what: name}
			}
		}
	}
	return w
}

// mostZones is the largest number of distinct zones with a peer offline
// at the same instant.
func (m *peerTimeline) mostZones() timelineWorst {
	m.mu.Lock()
	defer m.mu.Unlock()
	var w timelineWorst
	for _, c := range m.changes {
		zones := map[string]bool{}
		for _, p := range c.peers {
			zones[m.zone[p]] = true
		}
		if len(zones) > w.count {
			w = timelineWorst{count: len(zones), at: c.at, what: strings.Join(slices.Sorted(maps.Keys(zones)), ", ")}
		}
	}
	return w
}

// mostInOneZone is, per zone, the largest number of its peers offline at
// the same instant.
func (m *peerTimeline) mostInOneZone() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for _, c := range m.changes {
		per := map[string]int{}
		for _, p := range c.peers {
			per[m.zone[p]]++
		}
		for z, n := range per {
			out[z] = max(out[z], n)
		}
	}
	return out
}

// replicaSets maps "volume/subvol" to the peer id of each of its bricks.
func replicaSets(t testing.TB, g *gd2.Client, vols []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, v := range vols {
		vol, err := g.GetVolume(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, sv := range vol.Subvols {
			for _, b := range sv.Bricks {
				out[v+"/"+sv.Name] = append(out[v+"/"+sv.Name], b.PeerID)
			}
		}
	}
	return out
}
