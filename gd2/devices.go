package gd2

import (
	"context"
	"net/http"
)

// DeviceState tells whether the planner may place bricks on a device.
type DeviceState string

const (
	DeviceEnabled  DeviceState = "enabled"
	DeviceDisabled DeviceState = "disabled"
)

// Device is a block device (or loop file) registered on a peer; registered
// devices are the only capacity smart volumes and replace-brick draw from.
type Device struct {
	Device      string      `json:"device"`
	Provisioner string      `json:"provisioner"`
	State       DeviceState `json:"state"`
	FreeSize    uint64      `json:"free-size"`
	TotalSize   uint64      `json:"total-size"`
	UsedSize    uint64      `json:"used-size"`
	ExtentSize  uint64      `json:"extent-size"`
	DeviceUsed  bool        `json:"device-used"` // GD2 never sets it
	PeerID      string      `json:"peer-id"`
}

// DeviceAddRequest registers a device; empty Provisioner means lvm.
type DeviceAddRequest struct {
	Device      string `json:"device"`
	Provisioner string `json:"provisioner,omitempty"`
}

// AddDevice registers a device on a peer. GD2 has no device delete.
func (c *Client) AddDevice(ctx context.Context, peerID string, req DeviceAddRequest) (*Device, error) {
	p, perr := apiPath("devices", peerID)
	var out Device
	if err := c.do(ctx, request{op: OpDevicesAdd, method: http.MethodPost, path: p, pathErr: perr, body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListDevices lists one peer's devices; may be nil.
func (c *Client) ListDevices(ctx context.Context, peerID string) ([]Device, error) {
	p, perr := apiPath("devices", peerID)
	var out []Device
	err := c.do(ctx, request{op: OpDevicesList, method: http.MethodGet, path: p, pathErr: perr, out: &out, allowEmpty: true})
	return out, err
}

// ListAllDevices lists the devices of every peer; may be nil.
func (c *Client) ListAllDevices(ctx context.Context) ([]Device, error) {
	var out []Device
	err := c.do(ctx, request{op: OpDevicesListAll, method: http.MethodGet, path: "/v1/devices", out: &out, allowEmpty: true})
	return out, err
}

// GetDevice returns one device, e.g. device "/dev/sdb". GD2 answers a
// one-element list, and 500 for an unknown device (matches ErrNotFound).
func (c *Client) GetDevice(ctx context.Context, peerID, device string) (*Device, error) {
	p, perr := apiPathTail(device, "devices", peerID)
	var out []Device
	if err := c.do(ctx, request{op: OpDevicesGet, method: http.MethodGet, path: p, pathErr: perr, out: &out, allowEmpty: true}); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &APIError{Status: http.StatusNotFound, Op: OpDevicesGet, Method: http.MethodGet, Path: p,
			Body: "empty device list in 200 answer"}
	}
	return &out[0], nil
}

// EditDevice enables or disables a device for brick placement.
func (c *Client) EditDevice(ctx context.Context, peerID, device string, state DeviceState) error {
	p, perr := apiPathTail(device, "devices", peerID)
	body := struct {
		State DeviceState `json:"state"`
	}{state}
	return c.do(ctx, request{op: OpDevicesEdit, method: http.MethodPost, path: p, pathErr: perr, body: body})
}
