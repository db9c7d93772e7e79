package objects

import (
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// A node whose bricks are GD2 LVM volume groups on its claims (claims
// mode with the lvm provisioner) needs a step the 2019 deployment, which
// gave GD2 the host's /dev, did not. GD2 names each volume group after its
// device's path ("gluster" + the path with "/" as "-": glusterd2@54ce5f6f
// plugins/device/api/resp.go) and records every brick's device as
// /dev/<vg>/<lv> (glusterd2/bricksplanner). With udev off in the image,
// LVM makes those nodes in the container's own /dev, which a restarted
// container no longer has; at start GD2 only mounts the recorded path
// (glusterd2/volume/fs_utils.go MountBrickDirectory, from main.go
// MountLocalBricks) and never activates a volume group. So the container
// first activates the volume groups on its claims and makes their nodes
// (lvmPrelude), then execs glusterd2.

// lvmOnClaims reports whether node n's bricks are LVM volume groups on its
// claims: claims (no host devices) and the lvm provisioner.
func lvmOnClaims(n *operatorv1alpha1.GlusterNode) bool {
	s := n.Spec.Storage
	return s != nil && len(s.Devices) == 0 && s.Capacity != nil && NodeProvisioner(n) == ProvisionerLVM
}

// imageShell is the GD2 image's shell (centos:7's bash, as /bin/sh).
const imageShell = "/bin/sh"

// lvmClaimFilter is an LVM configuration that lets LVM see only the
// node's own claims: the privileged container sees every block device of
// its host, and activating a volume group of the host or of another pod
// would hold that pod's disk open.
const lvmClaimFilter = `devices { filter = [ "a|^` + claimDeviceDir + `/|", "r|.*|" ] }`

// lvmPrelude is the script the GD2 container of an lvmOnClaims node runs
// from the image's shell before glusterd2, which it then execs with the
// container's remaining arguments ($0 is the program, "$@" its flags), so
// glusterd2 still gets the container's signals. The image's lvm2 2.02.180
// (glusterd2@54ce5f6f extras/nightly-container/provision.yml):
// vgchange --activate y activates the volume groups' LVs (after a host
// reboot they are inactive); vgmknodes makes the /dev/<vg>/<lv> and
// /dev/mapper nodes of every active LV (after a container restart the LVs
// are active in the kernel and only the nodes are gone). With no volume
// group yet (a node's first start, before its devices are added) both exit
// 0 (lvm2@v2_02_180 tools/toollib.c: "No volume groups found." is
// ECMD_PROCESSED). A failure of either is reported on the container log
// and glusterd2 starts all the same: the peer stays reachable and GD2
// reports the bricks it could not mount, as it would without the prelude.
const lvmPrelude = `claims='` + lvmClaimFilter + `'
vgchange --activate y --config "$claims" || echo "anthill: vgchange --activate y failed; bricks on its volume groups stay offline" >&2
vgmknodes --config "$claims" || echo "anthill: vgmknodes failed; bricks whose device nodes are missing stay offline" >&2
exec "$0" "$@"`

// GD2LVMPrelude is the GD2 contract's prelude for lvmOnClaims nodes.
var GD2LVMPrelude = Prelude{
	Shell:  imageShell,
	Script: lvmPrelude,
	Source: "container-contracts.md §1 (the image: centos:7 with lvm2 2.02.180, udev_rules=0, udev_sync=0, " +
		"use_lvmetad=0, obtain_device_list_from_udev=0; glusterd2@54ce5f6f: plugins/device/api/resp.go VgName, " +
		"glusterd2/bricksplanner/utils.go DevicePath, glusterd2/volume/fs_utils.go MountBrickDirectory, " +
		"glusterd2/main.go MountLocalBricks; lvm2@v2_02_180: tools/vgmknodes.c, tools/toollib.c process_each_vg)",
}

// gd2Command is node n's GD2 container command: glusterd2 and its flags,
// behind the LVM prelude for an lvmOnClaims node.
func gd2Command(n *operatorv1alpha1.GlusterNode) []string {
	cmd := []string{gd2Binary, "--config=" + gd2ConfigFile, "--logfile=stdout"}
	if !lvmOnClaims(n) {
		return cmd
	}
	return append([]string{GD2LVMPrelude.Shell, "-c", GD2LVMPrelude.Script}, cmd...)
}
