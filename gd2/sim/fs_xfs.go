package sim

// Brick file systems. GD2 makes every brick an XFS file system (mkfs.xfs
// with its defaults plus -i size=512 -n size=8192) and reports sizes from
// statfs of the brick directory: Blocks*Bsize as capacity, Bfree*Bsize as
// free. XFS does not count its internal log in Blocks, and a fresh file
// system already has blocks in use (the reserved block pool, the
// allocation-group headers and btree roots, the root inode chunk). So a
// brick made with N bytes reports less than N as capacity and a little
// already used, and a replacement, which GD2 sizes from the source's
// statfs capacity, is made smaller than the source by one log each hop.
//
// The numbers follow mkfs.xfs's defaults for 4 KiB blocks (xfsprogs 4.x,
// the era of GD2 at 54ce5f6f); the minimum log size depends on details of
// the geometry and is approximated.

const (
	xfsBlock = 4096
	// xfsMinLogBlocks approximates mkfs's minimum log for 512-byte inodes.
	xfsMinLogBlocks = 853
	// Between 1 and 16 GiB mkfs uses the 10 MiB log (XFS_MIN_LOG_BYTES);
	// above, 1/2048 of the file system, at most 2 GiB.
	xfsSmallLogBytes = 10 * mib
	xfsMaxLogBytes   = 2 * gib
	// The reserved block pool is 5 % of the blocks, at most 8192 blocks.
	xfsMaxReserveBlocks = 8192
	// Blocks each allocation group's headers and btree roots take, and the
	// root inode chunk (64 inodes of 512 bytes).
	xfsAGBlocks        = 8
	xfsRootInodeBlocks = 8
	// mkfs makes four allocation groups below 4 TiB, one per TiB above.
	xfsAGSize = 1 << 40
)

// xfsLogBytes is the internal log mkfs.xfs makes on a file system of size
// bytes.
func xfsLogBytes(size uint64) uint64 {
	blocks := size / xfsBlock
	var log uint64
	switch {
	case size < gib:
		log = xfsMinLogBlocks * xfsBlock
	case size < 16*gib:
		log = xfsSmallLogBytes
	default:
		log = size / 2048 / xfsBlock * xfsBlock
	}
	log = max(log, xfsMinLogBlocks*xfsBlock)
	// The log must leave room for data; tiny sizes keep a quarter.
	log = min(log, blocks/4*xfsBlock, xfsMaxLogBytes)
	return log
}

// xfsFresh is what statfs reports on a freshly made XFS of size bytes:
// its capacity (without the log) and the bytes already used.
func xfsFresh(size uint64) (capacity, used uint64) {
	blocks := size / xfsBlock
	if blocks == 0 {
		return 0, 0
	}
	capacity = blocks*xfsBlock - xfsLogBytes(size)
	ags := uint64(4)
	if size > 4*xfsAGSize {
		ags = (size + xfsAGSize - 1) / xfsAGSize
	}
	usedBlocks := min(blocks/20, xfsMaxReserveBlocks) + ags*xfsAGBlocks + xfsRootInodeBlocks
	used = min(usedBlocks*xfsBlock, capacity)
	return capacity, used
}
