package sim

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Simulator is one simulated GD2 cluster plus the hosts around it.
type Simulator struct {
	cfg   Config
	clock clock.Clock

	// mu guards m and rng; handlers run with it held, so every GD2
	// operation is atomic, as GD2's cluster-wide locks make them.
	mu  sync.Mutex
	m   *model
	rng *rand.Rand

	faults *faultInjector

	// servingID is the peer serving the request being run (guarded by mu):
	// the origin of the events it records.
	servingID string

	// changes counts the configuration-altering GD2 calls that succeeded,
	// by operation (guarded by mu); see Changes.
	changes map[string]int
	// destructive logs replace-brick and peer-delete requests (guarded by
	// mu); see DestructiveCalls.
	destructive []DestructiveCall

	handler http.Handler
	closed  bool
}

// New builds a simulator. With Config.StatePath naming an existing file the
// saved cluster is restored and Peers/Zones are ignored.
func New(cfg Config) (*Simulator, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("gd2 simulator config: %w", err)
	}
	s := &Simulator{
		cfg:    c,
		clock:  c.Clock,
		rng:    rand.New(rand.NewPCG(uint64(c.Seed), 0x616e7468696c6c)),
		faults: newFaultInjector(c.Seed, c.Faults),
	}
	loaded := false
	if c.StatePath != "" {
		m, err := loadState(c.StatePath)
		switch {
		case err == nil:
			s.m = m
			loaded = true
		case errors.Is(err, os.ErrNotExist):
		default:
			return nil, fmt.Errorf("load simulator state: %w", err)
		}
	}
	if !loaded {
		s.m = newModel()
		s.m.ClusterID = s.newUUID()
		for i := 1; i <= c.Peers; i++ {
			name := fmt.Sprintf("gd2-%d", i)
			h := s.ensureHostLocked(name, name+":24008")
			h.Alive = true
			h.PID = s.newPID()
			p := s.joinLocked(h, h.Address, "", nil)
			if c.Zones > 0 {
				p.Metadata["_zone"] = fmt.Sprintf("zone-%d", (i-1)%c.Zones+1)
			}
		}
	}
	s.m.LastTick = s.clock.Now()
	if s.m.Locks == nil {
		s.m.Locks = map[string]bool{}
	}
	s.handler = s.buildHandler()
	if err := s.persistLocked(); err != nil {
		return nil, err
	}
	return s, nil
}

// Handler serves the GD2 routes and the /sim admin routes.
func (s *Simulator) Handler() http.Handler { return s.handler }

// Close saves the state (when persistence is on). The simulator runs no
// goroutines of its own, so nothing else needs stopping.
func (s *Simulator) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.persistLocked()
}

// ClusterID is the id reported in X-Gluster-Cluster-Id.
func (s *Simulator) ClusterID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.ClusterID
}

// newUUID draws a version-4 UUID from the seeded generator, so a seeded run
// hands out the same ids every time.
func (s *Simulator) newUUID() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := s.rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (s *Simulator) newPID() int { return 1000 + s.rng.IntN(60000) }

func (s *Simulator) now() time.Time { return s.clock.Now() }
