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
	msgPeerNotFound     = "peer not found"
	msgVolumeNotFound   = "volume not found"
	msgLock             = "could not obtain lock: another conflicting transaction may be in progress"
	msgTxnStep          = "a txn step failed"
	msgRemoveSelf       = "removing self is disallowed."
	msgPeerNotAlive     = "peer is not alive"
	msgPeerHasBricks    = "cannot delete peer, peer has bricks"
	msgNoHostnames      = "no hostnames present"
	msgBadRemoteAddr    = "failed to parse remote address"
	msgConnect          = "could not connect to host"
	msgPeerEditFailed   = "Transaction to update peer failed"
	msgReservedKey      = "metadata keys starting with '_' are reserved for internal use"
	msgMetadataTooLarge = "metadata size exceeds the maximum of 4096 bytes"

	msgInvalidVolName     = "invalid volume name"
	msgVolExists          = "volume already exists"
	msgDupBrick           = "duplicate brick entry"
	msgNoSubvols          = "subvolumes not specified"
	msgVolAlreadyStarted  = "volume already started"
	msgVolAlreadyStopped  = "volume already stopped"
	msgVolNotStarted      = "volume not started"
	msgVolDeleteStarted   = "volume must be in stopped state before deleting"
	msgInvalidBrickCount  = "invalid number of bricks"
	msgReplicaNotGiven    = "replica count not specified"
	msgReplicaSame        = "replica count is same"
	msgReplicaLower       = "replica count cannot be reduced"
	msgSpaceNotSufficient = "Space not sufficient on device"
	msgInvalidFlag        = "invalid flag"
	msgInvalidReplica     = "invalid Replica Count"
	msgInvalidArbiter     = "invalid Arbiter Count"
	msgInvalidDisperse    = "invalid Disperse Count"
	msgBrickTooSmall      = "brick size is too small"
	msgVolTooSmall        = "volume size is too small"
	msgMaxBrickTooSmall   = "max brick size is too small"
	msgBadReserveFactor   = "invalid snapshot reserve factor"
	msgNoDevices          = "no devices registered or available for allocating bricks"
	msgNoSpace            = "no space available or all the devices are not registered"
	msgBrickInUse         = "brick is already in use"
	msgLVCreateFailed     = "failed to create logical volume: insufficient free space"
	msgNodesDown          = "probably some of the nodes are down"

	msgInvalidOption   = "invalid option"
	msgOptionNeedsFlag = "option requires an allow flag"

	msgHealBadVolType  = "invalid operation for this volume type"
	msgHealInfoFailed  = "heal info operation failed"
	msgHealBadType     = "invalid heal type"
	msgShdDisabled     = "self heal option is disabled for this volume"
	msgSplitBrainBadOp = "invalid split-brain operation"
	msgSplitBrainArgs  = "missing or invalid arguments for split-brain resolution"
	msgSplitBrainFail  = "split-brain resolution failed"

	msgNoVG              = "No volume groups are available"
	msgNewBrickPeerParse = "peer id of new brick could not be parsed"

	msgDeviceExists    = "device already exists"
	msgDevicePrepare   = "transaction to prepare device failed"
	msgDeviceNotExist  = "device does not exist in the given peer"
	msgBadDeviceState  = "invalid device state"
	msgBadProvisioner  = "invalid provisioner"
	msgRebalBadOption  = "invalid Rebalance start option"
	msgRebalNotDist    = "not a distribute volume"
	msgRebalNotStarted = "rebalance not started"
	msgRebalNotFound   = "rebalance not found"

	msgNoServer = "no alive glusterd2 member is serving this cluster"
	msgInjected = "injected fault"
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

func lockErr() *apiError { return errf(http.StatusConflict, msgLock) }
