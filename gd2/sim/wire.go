package sim

// Wire types: the JSON shapes GD2 sends and accepts. They are written from
// the fact sheet, independently of the gd2 client package, on purpose.

type wireErrorItem struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

type wireErrorResp struct {
	Errors []wireErrorItem `json:"errors"`
}

type wirePeer struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	PeerAddresses   []string          `json:"peer-addresses"`
	ClientAddresses []string          `json:"client-addresses"`
	Online          bool              `json:"online"`
	PID             int               `json:"pid,omitempty"`
	Metadata        map[string]string `json:"metadata"`
}

type wirePeerAddReq struct {
	Addresses []string          `json:"addresses"`
	Zone      string            `json:"zone,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

type wirePeerEditReq struct {
	Zone     string            `json:"zone"`
	Metadata map[string]string `json:"metadata"`
}

type wireBrickReq struct {
	PeerID string `json:"peerid"`
	Path   string `json:"path"`
	Type   string `json:"type"`
}

type wireSubvolReq struct {
	Type               string         `json:"type"`
	Bricks             []wireBrickReq `json:"bricks"`
	Replica            int            `json:"replica"`
	Arbiter            int            `json:"arbiter"`
	DisperseCount      int            `json:"disperse-count"`
	DisperseData       int            `json:"disperse-data"`
	DisperseRedundancy int            `json:"disperse-redundancy"`
}

type wireVolCreateReq struct {
	Name                     string            `json:"name"`
	Transport                string            `json:"transport,omitempty"`
	Subvols                  []wireSubvolReq   `json:"subvols"`
	Force                    bool              `json:"force,omitempty"`
	Metadata                 map[string]string `json:"metadata,omitempty"`
	Flags                    map[string]bool   `json:"flags,omitempty"`
	Size                     uint64            `json:"size"`
	MaxBrickSize             uint64            `json:"max-brick-size,omitempty"`
	Distribute               int               `json:"distribute,omitempty"`
	Replica                  int               `json:"replica,omitempty"`
	Arbiter                  int               `json:"arbiter,omitempty"`
	Disperse                 int               `json:"disperse,omitempty"`
	DisperseData             int               `json:"disperse-data,omitempty"`
	DisperseRedundancy       int               `json:"disperse-redundancy,omitempty"`
	AverageFileSize          uint64            `json:"average-file-size,omitempty"`
	Snapshot                 bool              `json:"snapshot,omitempty"`
	SnapshotReserveFactor    float64           `json:"snapshot-reserve-factor,omitempty"`
	LimitPeers               []string          `json:"limit-peers,omitempty"`
	ExcludePeers             []string          `json:"exclude-peers,omitempty"`
	LimitZones               []string          `json:"limit-zones,omitempty"`
	ExcludeZones             []string          `json:"exclude-zones,omitempty"`
	SubvolZonesOverlap       bool              `json:"subvolume-zones-overlap,omitempty"`
	Provisioner              string            `json:"provisioner"`
	Options                  map[string]string `json:"options,omitempty"`
	AllowAdvancedOptions     bool              `json:"allow-advanced-options,omitempty"`
	AllowExperimentalOptions bool              `json:"allow-experimental-options,omitempty"`
	AllowDeprecatedOptions   bool              `json:"allow-deprecated-options,omitempty"`
}

type wireBrick struct {
	ID         string `json:"id"`
	Path       string `json:"path"`
	VolumeID   string `json:"volume-id"`
	VolumeName string `json:"volume-name"`
	PeerID     string `json:"peer-id"`
	Host       string `json:"host"`
	Type       string `json:"type"`
}

type wireSubvol struct {
	Name   string      `json:"name"`
	Type   string      `json:"type"`
	Bricks []wireBrick `json:"bricks"`
	// Subvols is never filled by GD2, so omitempty leaves it out.
	Subvols                 []wireSubvol `json:"subvols,omitempty"`
	ReplicaCount            int          `json:"replica-count"`
	ArbiterCount            int          `json:"arbiter-count"`
	DisperseCount           int          `json:"disperse-count"`
	DisperseDataCount       int          `json:"disperse-data-count,omitempty"`
	DisperseRedundancyCount int          `json:"disperse-redundancy-count,omitempty"`
}

type wireVolume struct {
	ID                      string            `json:"id"`
	Name                    string            `json:"name"`
	Type                    string            `json:"type"`
	Transport               string            `json:"transport"`
	DistributeCount         int               `json:"distribute-count"`
	ReplicaCount            int               `json:"replica-count"`
	ArbiterCount            int               `json:"arbiter-count,omitempty"`
	DisperseCount           int               `json:"disperse-count,omitempty"`
	DisperseDataCount       int               `json:"disperse-data-count,omitempty"`
	DisperseRedundancyCount int               `json:"disperse-redundancy-count,omitempty"`
	Options                 map[string]string `json:"options"`
	State                   string            `json:"state"`
	Subvols                 []wireSubvol      `json:"subvols"`
	Metadata                map[string]string `json:"metadata"`
	SnapList                []string          `json:"snap-list"`
	Capacity                uint64            `json:"capacity,omitempty"`
}

type wireSize struct {
	Capacity uint64 `json:"capacity"`
	Used     uint64 `json:"used"`
	Free     uint64 `json:"free"`
}

type wireVolumeStatus struct {
	Info   wireVolume `json:"info"`
	Online bool       `json:"online"`
	Size   wireSize   `json:"size"`
}

type wireBrickStatus struct {
	Info      wireBrick `json:"info"`
	Online    bool      `json:"online"`
	PID       int       `json:"pid"`
	Port      int       `json:"port"`
	FsType    string    `json:"fs-type"`
	MountOpts string    `json:"mount-opts"`
	Device    string    `json:"device"`
	Size      wireSize  `json:"size"`
}

type wireVolStartReq struct {
	ForceStartBricks bool `json:"force-start-bricks,omitempty"`
}

type wireVolEditReq struct {
	Metadata       map[string]string `json:"metadata"`
	DeleteMetadata bool              `json:"delete-metadata"`
}

type wireVolExpandReq struct {
	ReplicaCount int             `json:"replica,omitempty"`
	Bricks       []wireBrickReq  `json:"bricks,omitempty"`
	Force        bool            `json:"force,omitempty"`
	Flags        map[string]bool `json:"flags,omitempty"`
	Size         uint64          `json:"size,omitempty"`
	Distribute   int             `json:"distribute,omitempty"`
}

type wireVolOptionReq struct {
	Options                  map[string]string `json:"options"`
	AllowAdvancedOptions     bool              `json:"allow-advanced-options,omitempty"`
	AllowExperimentalOptions bool              `json:"allow-experimental-options,omitempty"`
	AllowDeprecatedOptions   bool              `json:"allow-deprecated-options,omitempty"`
}

type wireVolOptionResetReq struct {
	Options []string `json:"options"`
	Force   bool     `json:"force"`
	All     bool     `json:"all"`
}

type wireVolOptionGet struct {
	Name         string `json:"name"`
	Value        string `json:"value"`
	Modified     bool   `json:"modified"`
	DefaultValue string `json:"default-value"`
	OptionLevel  string `json:"option-level"`
}

type wireReplaceBrickReq struct {
	SrcPeerID          string          `json:"src-peerid"`
	SrcBrickPath       string          `json:"src-brickpath"`
	LimitPeers         []string        `json:"limit-peers,omitempty"`
	LimitZones         []string        `json:"limit-zones,omitempty"`
	ExcludePeers       []string        `json:"exclude-peers,omitempty"`
	ExcludeZones       []string        `json:"exclude-zones,omitempty"`
	SubvolZonesOverlap bool            `json:"subvolume-zones-overlap,omitempty"`
	Force              bool            `json:"force,omitempty"`
	Flags              map[string]bool `json:"flags,omitempty"`
}

// wireFileGfid keeps GD2's untagged Go field names on purpose.
type wireFileGfid struct {
	Filename string
	GfID     string
}

type wireBrickHealInfo struct {
	HostID                 string         `json:"host-id"`
	Name                   string         `json:"name"`
	Status                 string         `json:"status"`
	TotalEntries           *int64         `json:"total-entries,omitempty"`
	EntriesInHealPending   *int64         `json:"entries-in-heal-pending,omitempty"`
	EntriesInSplitBrain    *int64         `json:"entries-in-split-brain,omitempty"`
	EntriesPossiblyHealing *int64         `json:"entries-possibly-healing,omitempty"`
	Entries                *int64         `json:"entries,omitempty"`
	FileGfidList           []wireFileGfid `json:"file-gfid,omitempty"`
}

type wireSplitBrainReq struct {
	FileName  string `json:"filename"`
	HostName  string `json:"hostname"`
	BrickName string `json:"brickname"`
}

type wireDevice struct {
	Device      string `json:"device"`
	Provisioner string `json:"provisioner"`
	State       string `json:"state"`
	FreeSize    uint64 `json:"free-size"`
	TotalSize   uint64 `json:"total-size"`
	UsedSize    uint64 `json:"used-size"`
	ExtentSize  uint64 `json:"extent-size"`
	Used        bool   `json:"device-used"`
	PeerID      string `json:"peer-id"`
}

type wireDeviceAddReq struct {
	Device      string `json:"device"`
	Provisioner string `json:"provisioner"`
}

type wireDeviceEditReq struct {
	State string `json:"state"`
}

type wireRebalStartReq struct {
	Option string `json:"option"`
}

type wireRebalNodeStatus struct {
	PeerID          string `json:"peerid"`
	Status          string `json:"status"`
	RebalancedFiles string `json:"rebalanced-files"`
	RebalancedSize  string `json:"size"`
	LookedupFiles   string `json:"lookedup"`
	SkippedFiles    string `json:"skipped"`
	RebalanceFailed string `json:"failed"`
	ElapsedTime     string `json:"run-time"`
	TimeLeft        string `json:"time-left"`
}

type wireRebalStatus struct {
	Volume      string                `json:"volume"`
	RebalanceID string                `json:"rebalance-id"`
	Nodes       []wireRebalNodeStatus `json:"nodes-status"`
}

// wireRebalInfo is GD2's untagged rebalance record, returned by stop.
type wireRebalInfo struct {
	Volname     string
	State       int
	Cmd         int
	RebalanceID string
	CommitHash  uint64
	RebalStats  []wireRebalNodeStatus
}

type wireVersion struct {
	GlusterdVersion string `json:"glusterd-version"`
	APIVersion      int    `json:"api-version"`
}

type wireEndpoint struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Methods      string `json:"methods"`
	Path         string `json:"path"`
	RequestType  string `json:"request-type"`
	ResponseType string `json:"response-type"`
}

type wireClusterOption struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	Default  string `json:"default"`
	Modified bool   `json:"modified"`
}

type wireClusterOptionReq struct {
	Options map[string]string `json:"options"`
}

type wireEvent struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Data      map[string]string `json:"data"`
	Origin    string            `json:"origin"`
	Timestamp string            `json:"timestamp"`
}
