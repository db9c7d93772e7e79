package sim

import (
	"fmt"
	"net/http"
)

// Error messages GD2 sends. The ones the fact sheet quotes are verbatim;
// the rest are the simulator's wording for errors the sheet only names.
const (
	msgParse            = "unable to parse the request"
	msgInvalidPeerID    = "Invalid peer id passed"
	msgPeerEditBadID    = "Invalid peerID passed in url"
	msgDeviceBadPeerID  = "invalid peer-id passed in url"
	msgReplaceBadPeerID = "invalid peerID passed in url"
	msgPeerNotFound     = "peer not found"
	msgVolumeNotFound   = "volume not found"
	msgLock             = "could not obtain lock: another conflicting transaction may be in progress"
	msgTxnStep          = "a txn step failed"
	msgRemoveSelf       = "removing self is disallowed."
	msgPeerNotAlive     = "peer is not alive"
	msgPeerHasBricks    = "cannot delete peer, peer has bricks"
	msgNoHostnames      = "no hostnames present"
	msgBadRemoteAddr    = "failed to parse remote address"
	msgConnect          = "could not connect to host. Make sure host address is valid, network connection is active and gd2 is up and running"
	msgOtherCluster     = "peer is part of another cluster"
	msgPeerEditFailed   = "Transaction to update peer failed"
	msgReservedKey      = "key names starting with '_' are restricted in metadata field"
	msgMetadataTooLarge = "metadata size exceeds max allowed size of 4KB"

	msgInvalidVolName     = "invalid volume name"
	msgVolExists          = "volume already exists"
	msgDupBrick           = "duplicate brick entry"
	msgNoSubvols          = "brick list is empty"
	msgBadTransport       = "invalid transport. Supported values: tcp or rdma"
	msgVolAlreadyStarted  = "volume already started"
	msgVolAlreadyStopped  = "volume already stopped"
	msgVolNotStarted      = "volume not started"
	msgVolDeleteStarted   = "volume must be in stopped state before deleting"
	msgInvalidBrickCount  = "invalid number of bricks"
	msgCreateBrickCount   = "invalid number of bricks specified. Number of bricks must be a multiple of replica (+arbiter) count"
	msgReplicaNotGiven    = "replica count not specified"
	msgReplicaSame        = "replica count is same"
	msgSpaceNotSufficient = "Space not sufficient on device"
	msgInvalidFlag        = "invalid flag"
	msgInvalidReplica     = "invalid Replica Count"
	msgInvalidArbiter     = "invalid Arbiter Count"
	msgInvalidDisperse    = "invalid Disperse Count"
	msgBrickTooSmall      = "brick size is too small"
	msgVolTooSmall        = "invalid Volume Size, Minimum size required is 20971520"
	msgMaxBrickTooSmall   = "max brick size is too small"
	msgBadReserveFactor   = "invalid snapshot reserve factor"
	msgNoDevices          = "no devices registered or available for allocating bricks"
	msgNoSpace            = "no space available or all the devices are not registered"
	msgBrickInUse         = "brick is already in use"
	msgLVCreateFailed     = "failed to create logical volume: insufficient free space"
	msgNodesDown          = "probably some of the nodes are down"

	msgHealBadVolType  = "invalid operation for this volume type"
	msgHealInfoFailed  = "heal info operation failed"
	msgHealBadType     = "heal type can only be either index or full"
	msgShdDisabled     = "self heal option is disabled for this volume"
	msgSplitBrainBadOp = "invalid split-brain operation specified"
	msgSplitBrainFile  = "please specify filename for split-brain operation"
	msgSplitBrainArgs  = "please specify hostname and brick path to resolve split-brain"
	msgSplitBrainType  = "invalid operation: the volume is not a replicate or disperse volume"
	msgSplitBrainFail  = "split-brain resolution failed"
	// msgShdRPC is net/rpc's error when the self-heal daemon's connection
	// drops during the brick op (simulator's choice of the possible
	// transport errors).
	msgShdRPC    = "connection is shut down"
	stepSelfHeal = "selfheal.Heal"

	msgNoVG              = "No volume groups are available"
	msgNewBrickPeerParse = "peer id of new brick could not be parsed"

	msgDeviceExists    = "device already exists"
	msgDevicePrepare   = "transaction to prepare device failed"
	msgDeviceNotExist  = "device does not exist in the given peer"
	msgBadDeviceState  = "invalid state. Supported states are enabled, disabled"
	msgBadProvisioner  = "invalid provisioner"
	msgRebalBadOption  = "invalid Rebalance start option"
	msgRebalNotDist    = "not a distribute volume"
	msgRebalNotStarted = "rebalance not started"
	msgRebalNotFound   = "rebalance not found"

	msgNoServer     = "no alive glusterd2 member is serving this cluster"
	msgStandalone   = "this glusterd2 is not a member of the simulated cluster; a standalone glusterd2 is not modelled beyond ping, version and endpoints"
	msgStoreTimeout = "context deadline exceeded"
	msgInjected     = "injected fault"
)

// apiError is an error GD2 reports: the HTTP status plus the items of GD2's
// error envelope.
type apiError struct {
	Status int
	Items  []wireErrorItem
}

func (e *apiError) Error() string {
	if len(e.Items) == 0 {
		return http.StatusText(e.Status)
	}
	return e.Items[0].Message
}

// errf builds a code-1 (generic) error.
func errf(status int, format string, args ...any) *apiError {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &apiError{Status: status, Items: []wireErrorItem{{Code: 1, Message: msg}}}
}

// txnErr builds the code-2 error of GD2's v1 transaction engine: one item per
// failing peer, always HTTP 500.
func txnErr(peerID, step, cause string) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Items: []wireErrorItem{{
		Code:    2,
		Message: msgTxnStep,
		Fields:  map[string]string{"peer-id": peerID, "step": step, "error": cause},
	}}}
}

// txnErrOn is a step that failed on several nodes: one code-2 item per
// node, in the order given, as GD2 collects them.
func txnErrOn(peerIDs []string, step, cause string) *apiError {
	e := &apiError{Status: http.StatusInternalServerError}
	for _, id := range peerIDs {
		e.Items = append(e.Items, txnErr(id, step, cause).Items...)
	}
	return e
}

func lockErr() *apiError { return errf(http.StatusConflict, msgLock) }
