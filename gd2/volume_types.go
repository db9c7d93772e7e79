package gd2

// VolumeState is a volume's lifecycle state: Created → Started ⇄ Stopped;
// delete is allowed from Created and Stopped.
type VolumeState string

const (
	VolumeCreated VolumeState = "Created"
	VolumeStarted VolumeState = "Started"
	VolumeStopped VolumeState = "Stopped"
)

// VolumeType is the capitalised type GD2 reports for volumes.
type VolumeType string

const (
	VolumeDistribute           VolumeType = "Distribute"
	VolumeReplicate            VolumeType = "Replicate"
	VolumeDisperse             VolumeType = "Disperse"
	VolumeDistributedReplicate VolumeType = "Distributed-Replicate"
	VolumeDistributedDisperse  VolumeType = "Distributed-Disperse"
)

// SubvolType is the capitalised subvolume type in responses.
type SubvolType string

const (
	SubvolDistribute SubvolType = "Distribute"
	SubvolReplicate  SubvolType = "Replicate"
	SubvolDisperse   SubvolType = "Disperse"
)

// BrickType tells data bricks from arbiters in responses.
type BrickType string

const (
	BrickTypeBrick   BrickType = "Brick"
	BrickTypeArbiter BrickType = "Arbiter"
)

// Volume is what every volume-returning endpoint answers.
type Volume struct {
	ID                      string            `json:"id"`
	Name                    string            `json:"name"`
	Type                    VolumeType        `json:"type"`
	Transport               string            `json:"transport"`
	DistributeCount         int               `json:"distribute-count"`
	ReplicaCount            int               `json:"replica-count"`
	ArbiterCount            int               `json:"arbiter-count,omitempty"`
	DisperseCount           int               `json:"disperse-count,omitempty"`
	DisperseDataCount       int               `json:"disperse-data-count,omitempty"`
	DisperseRedundancyCount int               `json:"disperse-redundancy-count,omitempty"`
	Options                 map[string]string `json:"options"`
	State                   VolumeState       `json:"state"`
	Subvols                 []Subvol          `json:"subvols"`
	Metadata                map[string]string `json:"metadata"`
	SnapList                []string          `json:"snap-list"`
	// Capacity is the requested size in bytes of a smart (size-based)
	// volume; 0 for manual volumes.
	Capacity uint64 `json:"capacity,omitempty"`
}

// Bricks returns all bricks of the volume in subvolume order.
func (v *Volume) Bricks() []BrickInfo {
	var out []BrickInfo
	for _, sv := range v.Subvols {
		out = append(out, sv.Bricks...)
	}
	return out
}

// Subvol is one replica/disperse set (or distribute leg).
type Subvol struct {
	Name                    string      `json:"name"`
	Type                    SubvolType  `json:"type"`
	Bricks                  []BrickInfo `json:"bricks"`
	Subvols                 []Subvol    `json:"subvols,omitempty"`
	ReplicaCount            int         `json:"replica-count"`
	ArbiterCount            int         `json:"arbiter-count"`
	DisperseCount           int         `json:"disperse-count"`
	DisperseDataCount       int         `json:"disperse-data-count,omitempty"`
	DisperseRedundancyCount int         `json:"disperse-redundancy-count,omitempty"`
}

// BrickInfo is a brick's static description. Note the response spells the
// peer field peer-id while requests spell it peerid.
type BrickInfo struct {
	ID         string    `json:"id"`
	Path       string    `json:"path"`
	VolumeID   string    `json:"volume-id"`
	VolumeName string    `json:"volume-name"`
	PeerID     string    `json:"peer-id"`
	Host       string    `json:"host"`
	Type       BrickType `json:"type"`
}

// SizeInfo is statfs-derived sizing in bytes.
type SizeInfo struct {
	Capacity uint64 `json:"capacity"`
	Used     uint64 `json:"used"`
	Free     uint64 `json:"free"`
}

// VolumeStatus is the answer of GET /v1/volumes/{v}/status (Started only).
type VolumeStatus struct {
	Info   Volume   `json:"info"`
	Online bool     `json:"online"`
	Size   SizeInfo `json:"size"`
}

// BrickStatus is one brick's runtime status. Bricks on unreachable peers
// are still listed, with only Info set.
type BrickStatus struct {
	Info      BrickInfo `json:"info"`
	Online    bool      `json:"online"`
	PID       int       `json:"pid"`
	Port      int       `json:"port"`
	FSType    string    `json:"fs-type"`
	MountOpts string    `json:"mount-opts"`
	Device    string    `json:"device"`
	Size      SizeInfo  `json:"size"`
}

// Subvolume types and brick types in requests are lowercase.
const (
	SubvolReqDistribute = "distribute"
	SubvolReqReplicate  = "replicate"
	SubvolReqDisperse   = "disperse"
	BrickReqArbiter     = "arbiter"
)

// Provisioners for smart volumes and devices.
const (
	ProvisionerLVM  = "lvm"
	ProvisionerLoop = "loop"
)

// VolumeOptionRequest sets volume options. Advanced options such as
// cluster/replicate.self-heal-daemon need AllowAdvanced.
type VolumeOptionRequest struct {
	Options           map[string]string `json:"options,omitempty"`
	AllowAdvanced     bool              `json:"allow-advanced-options,omitempty"`
	AllowExperimental bool              `json:"allow-experimental-options,omitempty"`
	AllowDeprecated   bool              `json:"allow-deprecated-options,omitempty"`
}

// BrickRequest names a brick for a manual layout or an add-brick expand.
type BrickRequest struct {
	PeerID string `json:"peerid"`
	Path   string `json:"path"`
	Type   string `json:"type,omitempty"` // "", "brick" or "arbiter"
}

// SubvolRequest is one subvolume of a manual layout.
type SubvolRequest struct {
	Type               string         `json:"type"`
	Bricks             []BrickRequest `json:"bricks"`
	Replica            int            `json:"replica,omitempty"`
	Arbiter            int            `json:"arbiter,omitempty"`
	DisperseCount      int            `json:"disperse-count,omitempty"`
	DisperseData       int            `json:"disperse-data,omitempty"`
	DisperseRedundancy int            `json:"disperse-redundancy,omitempty"`
}

// VolumeCreateRequest creates a volume either from an explicit layout
// (Subvols) or, when Size > 0, from registered devices by GD2's planner
// ("smart" volume). The smart planner puts every brick of the volume in a
// distinct zone unless SubvolZonesOverlap.
type VolumeCreateRequest struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport,omitempty"`
	Subvols   []SubvolRequest   `json:"subvols"`
	Force     bool              `json:"force,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	Flags     map[string]bool   `json:"flags,omitempty"`

	Size                  uint64   `json:"size"`
	MaxBrickSize          uint64   `json:"max-brick-size,omitempty"`
	Distribute            int      `json:"distribute,omitempty"`
	Replica               int      `json:"replica,omitempty"`
	Arbiter               int      `json:"arbiter,omitempty"`
	Disperse              int      `json:"disperse,omitempty"`
	DisperseData          int      `json:"disperse-data,omitempty"`
	DisperseRedundancy    int      `json:"disperse-redundancy,omitempty"`
	AverageFileSize       uint64   `json:"average-file-size,omitempty"`
	Snapshot              bool     `json:"snapshot,omitempty"`
	SnapshotReserveFactor float64  `json:"snapshot-reserve-factor,omitempty"`
	LimitPeers            []string `json:"limit-peers,omitempty"`
	ExcludePeers          []string `json:"exclude-peers,omitempty"`
	LimitZones            []string `json:"limit-zones,omitempty"`
	ExcludeZones          []string `json:"exclude-zones,omitempty"`
	SubvolZonesOverlap    bool     `json:"subvolume-zones-overlap,omitempty"`
	Provisioner           string   `json:"provisioner"`

	VolumeOptionRequest
}

// VolumeExpandRequest grows a volume: in place when Distribute equals the
// current subvolume count and Size > 0 (smart volumes), else by adding the
// given bricks.
type VolumeExpandRequest struct {
	Replica    int             `json:"replica,omitempty"`
	Bricks     []BrickRequest  `json:"bricks,omitempty"`
	Force      bool            `json:"force,omitempty"`
	Flags      map[string]bool `json:"flags,omitempty"`
	Size       uint64          `json:"size,omitempty"`
	Distribute int             `json:"distribute,omitempty"`
}

// VolumeEditRequest merges metadata, or with DeleteMetadata removes the
// listed keys (values ignored).
type VolumeEditRequest struct {
	Metadata       map[string]string `json:"metadata"`
	DeleteMetadata bool              `json:"delete-metadata,omitempty"`
}

// VolumeOption is one option as GET .../options reports it.
type VolumeOption struct {
	Name         string `json:"name"`
	Value        string `json:"value"`
	Modified     bool   `json:"modified"`
	DefaultValue string `json:"default-value"`
	OptionLevel  string `json:"option-level"`
}

// VolumeOptionResetRequest resets options to their defaults.
type VolumeOptionResetRequest struct {
	Options []string `json:"options,omitempty"`
	Force   bool     `json:"force,omitempty"`
	All     bool     `json:"all,omitempty"`
}

// ReplaceBrickRequest moves one brick to a new brick the planner allocates
// from registered devices, in a zone not used by the volume's other bricks.
type ReplaceBrickRequest struct {
	SrcPeerID          string          `json:"src-peerid"`
	SrcBrickPath       string          `json:"src-brickpath,omitempty"`
	LimitPeers         []string        `json:"limit-peers,omitempty"`
	LimitZones         []string        `json:"limit-zones,omitempty"`
	ExcludePeers       []string        `json:"exclude-peers,omitempty"`
	ExcludeZones       []string        `json:"exclude-zones,omitempty"`
	SubvolZonesOverlap bool            `json:"subvolume-zones-overlap,omitempty"`
	Force              bool            `json:"force,omitempty"`
	Flags              map[string]bool `json:"flags,omitempty"`
}

// OptionSelfHealDaemon is the volume option GD2 requires to be "on" before
// it triggers a heal (400 "self heal option is disabled for this volume"
// otherwise). Its default profile sets it off on replicate volumes and on
// on disperse volumes.
const OptionSelfHealDaemon = "cluster/replicate.self-heal-daemon"

// The replicate options that switch AFR's data, metadata and entry
// self-heal. GD2 writes the self-heal daemons' volfile without them, so
// the daemons heal nothing until they are set on (legacy glusterd forces
// them on for the daemon); on a volume they also switch client-side heal.
const (
	OptionDataSelfHeal     = "cluster/replicate.data-self-heal"
	OptionMetadataSelfHeal = "cluster/replicate.metadata-self-heal"
	OptionEntrySelfHeal    = "cluster/replicate.entry-self-heal"
)
