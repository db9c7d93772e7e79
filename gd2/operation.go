package gd2

// Operation names one client call. It is the only label the client hands to
// an Observer, so metrics built from it stay bounded: raw paths would carry
// volume names and peer UUIDs and grow without limit.
type Operation string

// The complete set of operations.
const (
	OpPing      Operation = "ping"
	OpVersion   Operation = "version"
	OpEndpoints Operation = "endpoints"

	OpPeersList   Operation = "peers.list"
	OpPeersGet    Operation = "peers.get"
	OpPeersAdd    Operation = "peers.add"
	OpPeersEdit   Operation = "peers.edit"
	OpPeersDelete Operation = "peers.delete"

	OpVolumesCreate       Operation = "volumes.create"
	OpVolumesList         Operation = "volumes.list"
	OpVolumesGet          Operation = "volumes.get"
	OpVolumesStart        Operation = "volumes.start"
	OpVolumesStop         Operation = "volumes.stop"
	OpVolumesDelete       Operation = "volumes.delete"
	OpVolumesExpand       Operation = "volumes.expand"
	OpVolumesStatus       Operation = "volumes.status"
	OpVolumesBricksStatus Operation = "volumes.bricks_status"
	OpVolumesEdit         Operation = "volumes.edit"
	OpVolumesOptionsGet   Operation = "volumes.options_get"
	OpVolumesOptionsSet   Operation = "volumes.options_set"
	OpVolumesOptionsReset Operation = "volumes.options_reset"
	OpVolumesReplaceBrick Operation = "volumes.replace_brick"

	OpHealInfo       Operation = "heal.info"
	OpHealTrigger    Operation = "heal.trigger"
	OpHealSplitBrain Operation = "heal.split_brain"

	OpRebalanceStart  Operation = "rebalance.start"
	OpRebalanceStatus Operation = "rebalance.status"
	OpRebalanceStop   Operation = "rebalance.stop"

	OpDevicesAdd     Operation = "devices.add"
	OpDevicesList    Operation = "devices.list"
	OpDevicesListAll Operation = "devices.list_all"
	OpDevicesGet     Operation = "devices.get"
	OpDevicesEdit    Operation = "devices.edit"

	OpClusterOptionsGet Operation = "cluster.options_get"
	OpClusterOptionsSet Operation = "cluster.options_set"
)
