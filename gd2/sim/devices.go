package sim

import (
	"net/http"
	"strings"
)

const (
	deviceEnabled  = "enabled"
	deviceDisabled = "disabled"
	provLVM        = "lvm"
	provLoop       = "loop"
	extentSize     = 4 << 20
)

func wireDeviceOf(d *device) wireDevice {
	used := d.Total - min(d.Free, d.Total)
	if d.Provisioner == provLoop {
		used = d.Used
	}
	return wireDevice{
		Device: d.Path, Provisioner: d.Provisioner, State: d.State,
		FreeSize: d.Free, TotalSize: d.Total, UsedSize: used,
		ExtentSize: d.Extent, PeerID: d.PeerID,
	}
}

// deviceAdd registers a disk the peer's host offers; its size is the
// simulated disk size (an empty VG's free space).
func deviceAdd(c *call) (int, any, error) {
	p, err := c.peerArg()
	if err != nil {
		return 0, nil, err
	}
	var req wireDeviceAddReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Provisioner == "" {
		req.Provisioner = provLVM
	}
	if req.Provisioner != provLVM && req.Provisioner != provLoop {
		return 0, nil, errf(http.StatusBadRequest, msgBadProvisioner)
	}
	if req.Device == "" || !strings.HasPrefix(req.Device, "/") {
		return 0, nil, errf(http.StatusBadRequest, "invalid device path")
	}
	key := deviceKey(p.ID, req.Device)
	if c.m.Devices[key] != nil {
		return 0, nil, errf(http.StatusBadRequest, msgDeviceExists)
	}
	if err := c.lock(p.ID, key); err != nil {
		return 0, nil, err
	}
	h := c.m.Hosts[p.Host]
	if !c.m.processUp(p.ID) || h == nil {
		return 0, nil, errf(http.StatusInternalServerError, msgDevicePrepare)
	}
	var pd *physDevice
	for i := range h.Devices {
		if h.Devices[i].Path == req.Device {
			pd = &h.Devices[i]
		}
	}
	if pd == nil {
		// pvcreate (loop: statfs) on a missing path fails inside the
		// prepare txn.
		return 0, nil, errf(http.StatusInternalServerError, msgDevicePrepare)
	}
	var d *device
	if req.Provisioner == provLoop {
		d = loopDevice(p.ID, pd)
	} else {
		total := pd.Size / extentSize * extentSize
		d = &device{PeerID: p.ID, Path: req.Device, Provisioner: req.Provisioner, State: deviceEnabled, Total: total, Free: total, Extent: extentSize}
	}
	c.m.Devices[key] = d
	c.header.Set("Location", "/v1/devices/"+p.ID+req.Device)
	return http.StatusCreated, wireDeviceOf(d), nil
}

// deviceList and devicePeerList answer null when nothing matches.
func deviceList(c *call) (int, any, error) {
	var out []wireDevice
	for _, d := range c.m.sortedDevices() {
		out = append(out, wireDeviceOf(d))
	}
	return http.StatusOK, out, nil
}

func devicePeerList(c *call) (int, any, error) {
	id := c.pv("peerid")
	if !validUUID(id) {
		return 0, nil, errf(http.StatusBadRequest, msgDeviceBadPeerID)
	}
	var out []wireDevice
	for _, d := range c.m.sortedDevices() {
		if d.PeerID == id {
			out = append(out, wireDeviceOf(d))
		}
	}
	return http.StatusOK, out, nil
}

func (c *call) deviceArg() (*device, error) {
	id := c.pv("peerid")
	if !validUUID(id) {
		return nil, errf(http.StatusBadRequest, msgDeviceBadPeerID)
	}
	d := c.m.Devices[deviceKey(id, "/"+c.pv("device"))]
	if d == nil {
		return nil, errf(http.StatusInternalServerError, msgDeviceNotExist)
	}
	return d, nil
}

// deviceGet answers a one-element list; a missing device is a 500.
func deviceGet(c *call) (int, any, error) {
	d, err := c.deviceArg()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, []wireDevice{wireDeviceOf(d)}, nil
}

func deviceEdit(c *call) (int, any, error) {
	id := c.pv("peerid")
	if !validUUID(id) {
		return 0, nil, errf(http.StatusBadRequest, msgDeviceBadPeerID)
	}
	var req wireDeviceEditReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.State != deviceEnabled && req.State != deviceDisabled {
		return 0, nil, errf(http.StatusBadRequest, msgBadDeviceState)
	}
	d, err := c.deviceArg()
	if err != nil {
		return 0, nil, err
	}
	if err := c.lock(id + d.Path); err != nil {
		return 0, nil, err
	}
	d.State = req.State
	return http.StatusOK, nil, nil
}
