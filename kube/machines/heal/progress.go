package heal

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

// healProgress is what the heal machine keeps of a Healing volume between
// looks: when its pending count last fell (for the stall timeout) and the
// last reading whose count differed from the one before it (for when the
// heal should end, states.HealSnapshot.LastReading).
type healProgress struct {
	fellAt time.Time
	last   states.HealReading
}

func progressKey(c *operatorv1alpha1.GlusterCluster, volume string) string {
	return c.Namespace + "/" + c.Name + "/" + volume
}

// trackProgress returns when the pending count of a Healing volume last
// fell (zero: not seen to fall) and the reading before this one with
// another count (zero: none yet).
func (s *Syncer) trackProgress(c *operatorv1alpha1.GlusterCluster, r healReading, state fsm.State, now time.Time) (fellAt time.Time, last states.HealReading) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := progressKey(c, r.vol.Name)
	if state != states.HealHealing {
		delete(s.progress, k)
		return time.Time{}, states.HealReading{}
	}
	p, seen := s.progress[k]
	if !r.ok {
		return p.fellAt, states.HealReading{}
	}
	before := p.last
	if seen && r.pending < p.last.Pending {
		p.fellAt = now
	}
	if !seen || r.pending != p.last.Pending {
		p.last = states.HealReading{Pending: r.pending, At: now}
	}
	if s.progress == nil {
		s.progress = map[string]healProgress{}
	}
	s.progress[k] = p
	return p.fellAt, before
}

// pruneProgress drops the progress of volumes no longer in the cluster.
func (s *Syncer) pruneProgress(key engine.Key, entries []operatorv1alpha1.VolumeStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := key.Namespace + "/" + key.Name + "/"
	gone := func(k string) bool {
		if !strings.HasPrefix(k, prefix) {
			return false
		}
		name := strings.TrimPrefix(k, prefix)
		return !slices.ContainsFunc(entries, func(v operatorv1alpha1.VolumeStatus) bool { return v.Name == name })
	}
	maps.DeleteFunc(s.progress, func(k string, _ healProgress) bool { return gone(k) })
	maps.DeleteFunc(s.notStarted, func(k string, _ time.Time) bool { return gone(k) })
}

func (s *Syncer) nextBackoff(key engine.Key) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backoff == nil {
		s.backoff = map[engine.Key]time.Duration{}
	}
	b := s.backoff[key]
	if b == 0 {
		b = s.interval()
	}
	b = min(2*b, s.maxBackoff())
	s.backoff[key] = b
	return min(s.jitter(b), s.maxBackoff())
}

func (s *Syncer) resetBackoff(key engine.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.backoff, key)
}
