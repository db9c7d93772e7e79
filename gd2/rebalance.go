package gd2

import (
	"context"
	"encoding/json"
	"net/http"
)

// RebalanceOption selects the rebalance flavour.
type RebalanceOption string

const (
	RebalanceDefault   RebalanceOption = ""
	RebalanceFixLayout RebalanceOption = "fix-layout"
	RebalanceForce     RebalanceOption = "force"
)

// Per-node rebalance status codes (RebalanceNodeStatus.Status, numeric text).
const (
	RebalanceNotStarted = "0"
	RebalanceStarted    = "1"
	RebalanceStopped    = "2"
	RebalanceComplete   = "3"
	RebalanceFailed     = "4"
)

// RebalanceStatus is GET /v1/volumes/{v}/rebalance. Unreachable nodes are
// silently missing from Nodes.
type RebalanceStatus struct {
	Volume      string                `json:"volume"`
	RebalanceID string                `json:"rebalance-id"`
	Nodes       []RebalanceNodeStatus `json:"nodes-status"`
}

// RebalanceNodeStatus is one node's progress; GD2 sends every field as a
// string.
type RebalanceNodeStatus struct {
	PeerID          string `json:"peerid"`
	Status          string `json:"status"`
	RebalancedFiles string `json:"rebalanced-files"`
	Size            string `json:"size"`
	LookedUp        string `json:"lookedup"`
	Skipped         string `json:"skipped"`
	Failed          string `json:"failed"`
	RunTime         string `json:"run-time"`
	TimeLeft        string `json:"time-left"`
}

// RebalanceInfo is the stop answer, an internal GD2 struct sent with Go
// field names. Stats is kept raw: its shape is not part of GD2's API.
type RebalanceInfo struct {
	Volname     string          `json:"Volname"`
	State       int             `json:"State"`
	Cmd         int             `json:"Cmd"`
	RebalanceID string          `json:"RebalanceID"`
	CommitHash  uint64          `json:"CommitHash"`
	Stats       json.RawMessage `json:"RebalStats,omitempty"`
}

// StartRebalance starts a rebalance on a Started multi-subvolume volume
// and returns the rebalance ID.
func (c *Client) StartRebalance(ctx context.Context, volume string, opt RebalanceOption) (string, error) {
	p, perr := apiPath("volumes", volume, "rebalance", "start")
	body := struct {
		Option RebalanceOption `json:"option"`
	}{opt}
	var id string
	err := c.do(ctx, request{op: OpRebalanceStart, method: http.MethodPost, path: p, pathErr: perr, body: body, out: &id})
	return id, err
}

// RebalanceStatus reports progress; ErrNotFound if never started.
func (c *Client) RebalanceStatus(ctx context.Context, volume string) (*RebalanceStatus, error) {
	p, perr := apiPath("volumes", volume, "rebalance")
	var out RebalanceStatus
	if err := c.do(ctx, request{op: OpRebalanceStatus, method: http.MethodGet, path: p, pathErr: perr, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// StopRebalance stops a running rebalance (ErrRebalanceNotStarted
// otherwise).
func (c *Client) StopRebalance(ctx context.Context, volume string) (*RebalanceInfo, error) {
	p, perr := apiPath("volumes", volume, "rebalance", "stop")
	var out RebalanceInfo
	if err := c.do(ctx, request{op: OpRebalanceStop, method: http.MethodPost, path: p, pathErr: perr, out: &out, allowEmpty: true}); err != nil {
		return nil, err
	}
	return &out, nil
}
