package sim

// Loop-provisioner devices. A loop "device" is a directory: GD2 keeps each
// brick as an image file in it and mounts the image. When the directory is
// registered, GD2's loop prepare step reads statfs of it and stores the
// numbers crosswise: free-size is the file system's total (Blocks*Bsize),
// total-size its free (Bfree*Bsize), used-size total less free, and no
// extent size. The planner then reads free-size, so it offers the whole
// file system, whatever other files take. Each brick made there deducts
// its total-size from free-size and stores used-size as total-size less
// free-size, in unsigned arithmetic, as for a volume group: with the
// crossed numbers that wraps around.

// loopDevice is the record GD2 stores for a directory registered with the
// loop provisioner on a host file system described by pd.
func loopDevice(peerID string, pd *physDevice) *device {
	fsTotal, fsUsed := xfsFresh(pd.Size)
	fsFree := fsTotal - min(fsTotal, fsUsed+pd.Used)
	return &device{
		PeerID: peerID, Path: pd.Path, Provisioner: provLoop, State: deviceEnabled,
		Free: fsTotal, Total: fsFree, Used: fsTotal - fsFree,
	}
}

// take deducts a brick's total size from the device's free size, as GD2's
// ReduceDeviceFreeSize does (it re-reads an LVM group's free size later;
// the simulator's bookkeeping gives the same number).
func (d *device) take(n uint64) {
	d.Free -= n
	if d.Provisioner == provLoop {
		d.Used = d.Total - d.Free
	}
}

// give returns a brick's total size to the device. A volume group never
// has more free than its size; a loop record keeps GD2's arithmetic.
func (d *device) give(n uint64) {
	d.Free += n
	if d.Provisioner == provLoop {
		d.Used = d.Total - d.Free
		return
	}
	d.Free = min(d.Free, d.Total)
}
