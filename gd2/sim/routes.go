package sim

import "net/http"

// routes is GD2's route table as the simulator serves it. Names are the
// operation names used for per-op faults.
func (s *Simulator) routes() []route {
	g, p, d := http.MethodGet, http.MethodPost, http.MethodDelete
	return []route{
		{name: "Ping", method: g, pattern: "/ping", h: ping, desc: "liveness check"},
		{name: "Version", method: g, pattern: "/version", h: version, desc: "glusterd2 and API version"},
		{name: "Endpoints", method: g, pattern: "/endpoints", h: endpoints, desc: "list of routes"},

		{name: "GetPeers", method: g, pattern: "/v1/peers", h: peerList, desc: "list peers"},
		{name: "AddPeer", method: p, pattern: "/v1/peers", h: peerAdd, desc: "add a peer"},
		{name: "GetPeer", method: g, pattern: "/v1/peers/{peerid}", h: peerGet, desc: "get a peer"},
		{name: "EditPeer", method: p, pattern: "/v1/peers/{peerid}", h: peerEdit, txnV1: true, desc: "edit peer zone and metadata"},
		{name: "DeletePeer", method: d, pattern: "/v1/peers/{peerid}", h: peerDelete, desc: "remove a peer"},

		{name: "VolumeCreate", method: p, pattern: "/v1/volumes", h: volumeCreate, desc: "create a volume"},
		{name: "VolumeList", method: g, pattern: "/v1/volumes", h: volumeList, desc: "list volumes"},
		{name: "VolumeInfo", method: g, pattern: "/v1/volumes/{volname}", h: volumeGet, desc: "get a volume"},
		{name: "VolumeDelete", method: d, pattern: "/v1/volumes/{volname}", h: volumeDelete, desc: "delete a volume"},
		{name: "VolumeStart", method: p, pattern: "/v1/volumes/{volname}/start", h: volumeStart, desc: "start a volume"},
		{name: "VolumeStop", method: p, pattern: "/v1/volumes/{volname}/stop", h: volumeStop, desc: "stop a volume"},
		{name: "VolumeExpand", method: p, pattern: "/v1/volumes/{volname}/expand", h: volumeExpand, txnV1: true, desc: "expand a volume"},
		{name: "VolumeStatus", method: g, pattern: "/v1/volumes/{volname}/status", h: volumeStatus, desc: "volume size and state"},
		{name: "VolumeBricksStatus", method: g, pattern: "/v1/volumes/{volname}/bricks", h: bricksStatus, desc: "brick ports and liveness"},
		{name: "VolumeEdit", method: p, pattern: "/v1/volumes/{volname}/edit", h: volumeEdit, desc: "edit volume metadata"},
		{name: "VolumeOptions", method: p, pattern: "/v1/volumes/{volname}/options", h: volumeOptionsSet, desc: "set volume options"},
		{name: "VolumeOptionsGet", method: g, pattern: "/v1/volumes/{volname}/options", h: volumeOptionsGet, desc: "get volume options"},
		{name: "VolumeOptionsReset", method: d, pattern: "/v1/volumes/{volname}/options", h: volumeOptionsReset, desc: "reset volume options"},
		{name: "ReplaceBrick", method: p, pattern: "/v1/volumes/{volname}/replacebrick", h: replaceBrick, txnV1: true, desc: "replace a brick"},

		{name: "SelfHealInfo", method: g, pattern: "/v1/volumes/{volname}/heal-info", h: healInfo, desc: "heal info"},
		{name: "SelfHealInfo2", method: g, pattern: "/v1/volumes/{volname}/{a}/{rest...}", h: volumeSubGet, desc: "heal info with options; option get"},
		{name: "SelfHeal", method: p, pattern: "/v1/volumes/{volname}/heal", h: healTrigger, txnV1: true, desc: "trigger self-heal"},
		{name: "SplitBrainOperation", method: p, pattern: "/v1/volumes/{volname}/split-brain/{op}", h: splitBrainResolve, txnV1: true, desc: "resolve split-brain"},

		{name: "RebalanceStart", method: p, pattern: "/v1/volumes/{volname}/rebalance/start", h: rebalanceStart, txnV1: true, desc: "start rebalance"},
		{name: "RebalanceStop", method: p, pattern: "/v1/volumes/{volname}/rebalance/stop", h: rebalanceStop, txnV1: true, desc: "stop rebalance"},
		{name: "RebalanceStatus", method: g, pattern: "/v1/volumes/{volname}/rebalance", h: rebalanceStatus, desc: "rebalance status"},

		{name: "DeviceAdd", method: p, pattern: "/v1/devices/{peerid}", h: deviceAdd, desc: "register a device"},
		{name: "DeviceList", method: g, pattern: "/v1/devices", h: deviceList, desc: "list devices"},
		{name: "DeviceListPeer", method: g, pattern: "/v1/devices/{peerid}", h: devicePeerList, desc: "list a peer's devices"},
		{name: "DeviceInfo", method: g, pattern: "/v1/devices/{peerid}/{device...}", h: deviceGet, desc: "get a device"},
		{name: "DeviceEdit", method: p, pattern: "/v1/devices/{peerid}/{device...}", h: deviceEdit, desc: "enable or disable a device"},

		{name: "SnapshotCreate", method: p, pattern: "/v1/snapshots", h: snapshotCreate, txnV1: true, desc: "take a snapshot of a volume"},
		{name: "SnapshotListAll", method: g, pattern: "/v1/snapshots", h: snapshotList, desc: "list snapshots, all or ?volume="},
		{name: "SnapshotInfo", method: g, pattern: "/v1/snapshots/{snapname}", h: snapshotInfo, desc: "get a snapshot"},
		{name: "SnapshotDelete", method: d, pattern: "/v1/snapshots/{snapname}", h: snapshotDelete, txnV1: true, desc: "delete a snapshot"},
		{name: "SnapshotActivate", method: p, pattern: "/v1/snapshots/{snapname}/activate", h: snapshotActivate, txnV1: true, desc: "start a snapshot's bricks"},
		{name: "SnapshotDeactivate", method: p, pattern: "/v1/snapshots/{snapname}/deactivate", h: snapshotDeactivate, txnV1: true, desc: "stop a snapshot's bricks"},
		{name: "SnapshotClone", method: p, pattern: "/v1/snapshots/{snapname}/clone", h: snapshotClone, txnV1: true, desc: "make a volume from a snapshot"},

		{name: "ClusterOptionGet", method: g, pattern: "/v1/cluster/options", h: clusterOptionsGet, desc: "cluster options"},
		{name: "ClusterOptionSet", method: p, pattern: "/v1/cluster/options", h: clusterOptionsSet, desc: "set cluster options"},
		{name: "EventsList", method: g, pattern: "/v1/events", h: eventsList, desc: "recent events"},
	}
}
