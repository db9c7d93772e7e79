package sim

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"k8s.io/utils/clock"
)

// Config configures a Simulator. The zero value is a valid, empty, open-mode
// simulator without auth.
type Config struct {
	// Secret is GD2's 64 lowercase hex auth secret; "" turns auth off
	// (GD2's restauth=false).
	Secret string
	// Seed makes every random choice (UUIDs, pids, ports, fault decisions,
	// random list orders) reproducible.
	Seed int64
	// Peers pre-creates a cluster of that many members (hosts "gd2-1"...),
	// spread round-robin over Zones zones "zone-1".."zone-N". With Zones 0
	// each peer keeps GD2's default zone, its own UUID.
	Peers, Zones int
	// DevicesPerPeer and DeviceSize describe the disks every host offers
	// (/dev/sdb, /dev/sdc, ...). Defaults: 2 devices of 100 GiB.
	DevicesPerPeer int
	DeviceSize     uint64
	// WriteRate is the client write rate per replica set in heal entries per
	// second; HealRate the self-heal drain rate per brick in entries per
	// second. Defaults: 10 and 50.
	WriteRate, HealRate float64
	// InitialFiles is how many entries each replica set holds when created;
	// a replacement brick starts with the whole set (this plus every write
	// since) as its heal backlog. Default 100.
	InitialFiles float64
	// ManualBrickSize is the capacity reported for bricks given explicitly
	// (their size is not known to GD2's planner). Default 10 GiB.
	ManualBrickSize uint64
	// RebalanceDuration is how long a rebalance runs before it completes.
	// Default 10 s.
	RebalanceDuration time.Duration
	// StatePath, if set, is a JSON file the state is loaded from at start and
	// written to after every change, so a restarted simulator keeps its
	// cluster. "" = no persistence.
	StatePath string
	// Clock drives all time-dependent behaviour; nil = the real clock.
	Clock clock.Clock
	// Faults injects errors, latency and hangs.
	Faults Faults
	// StrictHosts makes peer add join only hosts the simulator knows and
	// sees alive (the Kubernetes link feeds them). Without it ("open mode")
	// any address auto-creates an alive host.
	StrictHosts bool
	// Version is what /version reports as glusterd-version.
	Version string
	// LivenessTTL is how long a crashed GD2 (CrashPeer) still shows online
	// to its peers: its liveness key lives until its etcd session lease
	// expires. A clean stop revokes it at once. Default 30 s (GD2's
	// session TTL); Instant for at once.
	LivenessTTL time.Duration
	// BrickReconnect is how long, after a GD2 restart (RestartPeer, or a
	// host coming back through UpsertHost, as the pod link does), its
	// bricks stay unreachable to clients, self-heal and heal-info while
	// their processes already run. Default 30 s; Instant for at once.
	// SetPeerAlive and SetHostAlive switch liveness without it.
	BrickReconnect time.Duration
	// UnmountedBrickStarts is the probability that a restarting GD2 starts
	// its bricks before their file systems are mounted: they then stay
	// offline until a volume start with force-start-bricks. Default 0.
	UnmountedBrickStarts float64
}

// Instant, as LivenessTTL or BrickReconnect, makes the change at once.
const Instant time.Duration = -1

// Defaults the zero Config fields take.
const (
	defaultDevicesPerPeer  = 2
	defaultDeviceSize      = 100 << 30
	defaultWriteRate       = 10
	defaultHealRate        = 50
	defaultInitialFiles    = 100
	defaultManualBrickSize = 10 << 30
	defaultRebalance       = 10 * time.Second
	defaultLivenessTTL     = 30 * time.Second
	defaultBrickReconnect  = 30 * time.Second
)

var secretRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (c *Config) withDefaults() (Config, error) {
	out := *c
	if out.Secret != "" && !secretRE.MatchString(out.Secret) {
		return out, errors.New("secret must be 64 lowercase hex characters")
	}
	if out.Peers < 0 || out.Zones < 0 || out.DevicesPerPeer < 0 {
		return out, errors.New("peers, zones and devices per peer must not be negative")
	}
	if out.WriteRate < 0 || out.HealRate < 0 || out.InitialFiles < 0 {
		return out, errors.New("write rate, heal rate and initial files must not be negative")
	}
	if out.DevicesPerPeer == 0 {
		out.DevicesPerPeer = defaultDevicesPerPeer
	}
	if out.DevicesPerPeer > 24 {
		return out, fmt.Errorf("at most 24 devices per peer (/dev/sdb../dev/sdy), got %d", out.DevicesPerPeer)
	}
	if out.DeviceSize == 0 {
		out.DeviceSize = defaultDeviceSize
	}
	if out.WriteRate == 0 {
		out.WriteRate = defaultWriteRate
	}
	if out.HealRate == 0 {
		out.HealRate = defaultHealRate
	}
	if out.InitialFiles == 0 {
		out.InitialFiles = defaultInitialFiles
	}
	if out.ManualBrickSize == 0 {
		out.ManualBrickSize = defaultManualBrickSize
	}
	if out.RebalanceDuration == 0 {
		out.RebalanceDuration = defaultRebalance
	}
	if out.LivenessTTL == 0 {
		out.LivenessTTL = defaultLivenessTTL
	}
	if out.BrickReconnect == 0 {
		out.BrickReconnect = defaultBrickReconnect
	}
	if out.UnmountedBrickStarts < 0 || out.UnmountedBrickStarts > 1 {
		return out, errors.New("unmounted brick starts must be a probability within [0,1]")
	}
	if out.Clock == nil {
		out.Clock = clock.RealClock{}
	}
	if err := out.Faults.Validate(); err != nil {
		return out, err
	}
	return out, nil
}
