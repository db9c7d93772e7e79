package gd2

import (
	"context"
	"net/http"
	"net/url"
)

// HealInfoKind selects the heal-info variant. GD2 passes it verbatim to
// glfsheal; "info" is not accepted (500).
type HealInfoKind string

const (
	HealInfoEntries    HealInfoKind = ""                 // per-brick entry counts
	HealInfoSummary    HealInfoKind = "info-summary"     // pending / split-brain / possibly-healing counts
	HealInfoSplitBrain HealInfoKind = "split-brain-info" // entries in split-brain
)

// HealType selects the heal crawl GD2 triggers.
type HealType string

const (
	HealIndex HealType = "index" // GD2's default: heal the entries the index lists
	HealFull  HealType = "full"  // crawl everything
)

// SplitBrainOp is a split-brain resolution policy.
type SplitBrainOp string

const (
	SplitBrainLatestMtime SplitBrainOp = "latest-mtime" // needs Filename
	SplitBrainBiggerFile  SplitBrainOp = "bigger-file"  // needs Filename
	SplitBrainSourceBrick SplitBrainOp = "source-brick" // needs Hostname and BrickName; Filename optional
)

// SplitBrainRequest names the file and/or source brick to resolve with.
type SplitBrainRequest struct {
	Filename  string `json:"filename,omitempty"` // absolute, inside the volume
	Hostname  string `json:"hostname,omitempty"`
	BrickName string `json:"brickname,omitempty"`
}

// BrickHealInfo is one brick's heal report. Counters are pointers because
// GD2 omits the ones the variant does not report (absent is not zero), and
// -1 means glfsheal printed "-": the brick is down.
type BrickHealInfo struct {
	HostID string `json:"host-id"` // peer UUID, or "-" when unreachable
	Name   string `json:"name"`    // host:/brick/path
	Status string `json:"status"`  // "Connected", or the connection error

	TotalEntries           *int64 `json:"total-entries,omitempty"`
	EntriesInHealPending   *int64 `json:"entries-in-heal-pending,omitempty"`
	EntriesInSplitBrain    *int64 `json:"entries-in-split-brain,omitempty"`
	EntriesPossiblyHealing *int64 `json:"entries-possibly-healing,omitempty"`
	Entries                *int64 `json:"entries,omitempty"`

	Files []HealFile `json:"file-gfid,omitempty"`
}

// HealFile is an entry needing heal. GD2 sends Go field names here.
type HealFile struct {
	Filename string `json:"Filename"`
	GfID     string `json:"GfID"`
}

// BrickDown reports whether any counter carries glfsheal's "-" marker.
func (b BrickHealInfo) BrickDown() bool {
	for _, p := range []*int64{b.TotalEntries, b.EntriesInHealPending, b.EntriesInSplitBrain, b.EntriesPossiblyHealing, b.Entries} {
		if p != nil && *p < 0 {
			return true
		}
	}
	return false
}

// HealInfo reports per-brick heal state of a Started replicate or disperse
// volume (ErrVolumeNotStarted, ErrUnsupportedVolumeType otherwise).
func (c *Client) HealInfo(ctx context.Context, volume string, kind HealInfoKind) ([]BrickHealInfo, error) {
	segs := []string{"volumes", volume}
	if kind != HealInfoEntries {
		segs = append(segs, string(kind))
	}
	p, perr := apiPath(append(segs, "heal-info")...)
	var out []BrickHealInfo
	err := c.do(ctx, request{op: OpHealInfo, method: http.MethodGet, path: p, pathErr: perr, out: &out, allowEmpty: true})
	return out, err
}

// Heal triggers self-heal. GD2 refuses unless the volume option
// cluster/replicate.self-heal-daemon is on (ErrSelfHealDisabled), which is off
// by default on replicate volumes.
func (c *Client) Heal(ctx context.Context, volume string, typ HealType) error {
	p, perr := apiPath("volumes", volume, "heal")
	var q url.Values
	if typ != "" {
		q = url.Values{"type": {string(typ)}}
	}
	return c.do(ctx, request{op: OpHealTrigger, method: http.MethodPost, path: p, pathErr: perr, query: q})
}

// ResolveSplitBrain resolves split-brain entries with the given policy.
func (c *Client) ResolveSplitBrain(ctx context.Context, volume string, op SplitBrainOp, req SplitBrainRequest) error {
	p, perr := apiPath("volumes", volume, "split-brain", string(op))
	return c.do(ctx, request{op: OpHealSplitBrain, method: http.MethodPost, path: p, pathErr: perr, body: req})
}
