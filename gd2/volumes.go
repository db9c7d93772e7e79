package gd2

import (
	"context"
	"fmt"
	"net/http"
)

// CreateVolume creates a volume (state Created) from an explicit layout or,
// with Size > 0, from registered devices. A name clash is 400 (not 409) and
// matches ErrAlreadyExists; planner failures are 500 and match ErrNoCapacity.
func (c *Client) CreateVolume(ctx context.Context, req VolumeCreateRequest) (*Volume, error) {
	var out Volume
	if err := c.do(ctx, request{op: OpVolumesCreate, method: http.MethodPost, path: "/v1/volumes", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListVolumes lists volumes in name order, optionally filtered by metadata.
func (c *Client) ListVolumes(ctx context.Context, f Filter) ([]Volume, error) {
	var out []Volume
	err := c.do(ctx, request{op: OpVolumesList, method: http.MethodGet, path: "/v1/volumes",
		query: f.query(), out: &out, allowEmpty: true})
	return out, err
}

// GetVolume returns one volume; ErrNotFound if unknown.
func (c *Client) GetVolume(ctx context.Context, name string) (*Volume, error) {
	return c.volumeCall(ctx, OpVolumesGet, http.MethodGet, name, "", nil)
}

// StartVolume starts a Created or Stopped volume. force also restarts bricks
// of a started volume instead of failing with ErrVolumeAlreadyStarted.
func (c *Client) StartVolume(ctx context.Context, name string, force bool) (*Volume, error) {
	body := struct {
		ForceStartBricks bool `json:"force-start-bricks,omitempty"`
	}{force}
	return c.volumeCall(ctx, OpVolumesStart, http.MethodPost, name, "start", body)
}

// StopVolume stops a Started volume (ErrVolumeAlreadyStopped,
// ErrVolumeNotStarted otherwise).
func (c *Client) StopVolume(ctx context.Context, name string) (*Volume, error) {
	return c.volumeCall(ctx, OpVolumesStop, http.MethodPost, name, "stop", nil)
}

// DeleteVolume deletes a Created or Stopped volume (ErrVolumeNotStopped when
// Started, ErrHasSnapshots with snapshots). Smart bricks' space returns to
// their devices.
func (c *Client) DeleteVolume(ctx context.Context, name string) error {
	p, perr := apiPath("volumes", name)
	return c.do(ctx, request{op: OpVolumesDelete, method: http.MethodDelete, path: p, pathErr: perr})
}

// ExpandVolume grows a volume. GD2 answers 500 for an unknown volume; that
// still matches ErrNotFound.
func (c *Client) ExpandVolume(ctx context.Context, name string, req VolumeExpandRequest) (*Volume, error) {
	return c.volumeCall(ctx, OpVolumesExpand, http.MethodPost, name, "expand", req)
}

// EditVolume merges or deletes volume metadata.
func (c *Client) EditVolume(ctx context.Context, name string, req VolumeEditRequest) (*Volume, error) {
	return c.volumeCall(ctx, OpVolumesEdit, http.MethodPost, name, "edit", req)
}

// SetVolumeOptions sets volume options and returns the updated volume.
func (c *Client) SetVolumeOptions(ctx context.Context, name string, req VolumeOptionRequest) (*Volume, error) {
	return c.volumeCall(ctx, OpVolumesOptionsSet, http.MethodPost, name, "options", req)
}

// ResetVolumeOptions resets the listed options (or all) to their defaults.
func (c *Client) ResetVolumeOptions(ctx context.Context, name string, req VolumeOptionResetRequest) error {
	p, perr := apiPath("volumes", name, "options")
	return c.do(ctx, request{op: OpVolumesOptionsReset, method: http.MethodDelete, path: p, pathErr: perr, body: req})
}

// VolumeOptions lists every option of a volume with value and default.
func (c *Client) VolumeOptions(ctx context.Context, name string) ([]VolumeOption, error) {
	var out []VolumeOption
	p, perr := apiPath("volumes", name, "options")
	err := c.do(ctx, request{op: OpVolumesOptionsGet, method: http.MethodGet, path: p, pathErr: perr, out: &out, allowEmpty: true})
	return out, err
}

// VolumeOption returns one option. GD2 routes the name as a single path
// segment, so use a slash-free spelling such as replicate.self-heal-daemon;
// a name with a slash is refused with ErrInvalidArgument.
func (c *Client) VolumeOption(ctx context.Context, name, option string) (*VolumeOption, error) {
	var out VolumeOption
	p, perr := apiPath("volumes", name, "options", option)
	if err := c.do(ctx, request{op: OpVolumesOptionsGet, method: http.MethodGet, path: p, pathErr: perr, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// VolumeStatus returns live size and status of a Started volume
// (ErrVolumeNotStarted otherwise).
func (c *Client) VolumeStatus(ctx context.Context, name string) (*VolumeStatus, error) {
	var out VolumeStatus
	p, perr := apiPath("volumes", name, "status")
	if err := c.do(ctx, request{op: OpVolumesStatus, method: http.MethodGet, path: p, pathErr: perr, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// BricksStatus returns every brick's runtime status, in no particular order.
func (c *Client) BricksStatus(ctx context.Context, name string) ([]BrickStatus, error) {
	var out []BrickStatus
	p, perr := apiPath("volumes", name, "bricks")
	err := c.do(ctx, request{op: OpVolumesBricksStatus, method: http.MethodGet, path: p, pathErr: perr, out: &out, allowEmpty: true})
	return out, err
}

// ReplaceBrick moves the brick on req.SrcPeerID (at req.SrcBrickPath) to a
// new brick the planner allocates. GD2's 200 body is the volume as it was
// *before* the replacement, so ReplaceBrick re-reads the volume and returns
// the fresh one. If only that re-read fails, the replacement did happen: the
// stale volume is returned with an error matching ErrRefreshFailed, and the
// call must not be repeated (it would move the brick again).
func (c *Client) ReplaceBrick(ctx context.Context, name string, req ReplaceBrickRequest) (*Volume, error) {
	before, err := c.volumeCall(ctx, OpVolumesReplaceBrick, http.MethodPost, name, "replacebrick", req)
	if err != nil {
		return nil, err
	}
	after, err := c.GetVolume(ctx, name)
	if err != nil {
		return before, fmt.Errorf("%w: %w", ErrRefreshFailed, err)
	}
	return after, nil
}

// volumeCall is the shape shared by calls that answer with a Volume.
func (c *Client) volumeCall(ctx context.Context, op Operation, method, name, action string, body any) (*Volume, error) {
	segs := []string{"volumes", name}
	if action != "" {
		segs = append(segs, action)
	}
	p, perr := apiPath(segs...)
	var out Volume
	if err := c.do(ctx, request{op: op, method: method, path: p, pathErr: perr, body: body, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}
