package effects

import (
	"errors"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
)

// Condition reasons for an action GD2 refused. Every refusal the operator
// can receive maps to one of them (RefusalReason), so a condition says what
// GD2 objected to, not just that something failed.
const (
	// ReasonGD2NodeDown: GD2's transaction engine found a node of the
	// operation down ("node <id> is probably down") and changed nothing.
	ReasonGD2NodeDown = "GD2NodeDown"
	// ReasonGD2Busy: another transaction holds GD2's lock (409).
	ReasonGD2Busy = "GD2Busy"
	// ReasonGD2StepFailed: a step of GD2's transaction failed on a node
	// (code 2); for a replace-brick that node is not offered again.
	ReasonGD2StepFailed = "GD2StepFailed"
	// ReasonBrickPrepareFailed: GD2 failed preparing a new brick on a node
	// (code 2 in a brick preparation step: a size-0 brick, an LV name
	// clash); that node is not offered again for the move.
	ReasonBrickPrepareFailed = "BrickPrepareFailed"
	// ReasonNoPlacement: GD2 found no device for a new brick.
	ReasonNoPlacement = "NoPlacement"
	// ReasonGD2Unauthorized: GD2 rejected the request's token (wrong
	// shared secret).
	ReasonGD2Unauthorized = "GD2Unauthorized"
	// ReasonGD2Refused: any other refusal GD2 answered (the message holds
	// its text).
	ReasonGD2Refused = "GD2Refused"
	// ReasonGD2Unreachable: no answer from GD2.
	ReasonGD2Unreachable = "GD2Unreachable"
	// ReasonPeerNotAlive, ReasonPeerHasBricks, ReasonRemovingSelf: peer
	// delete refusals.
	ReasonPeerNotAlive  = "PeerNotAlive"
	ReasonPeerHasBricks = "PeerHasBricks"
	ReasonRemovingSelf  = "RemovingServingPeer"
	// ReasonInvalidOption: GD2 rejected a volume option (on set it answers
	// 500 code 2 from vol-option.Validate).
	ReasonInvalidOption = "InvalidOption"
)

// RefusalReason classifies an action's error into a condition reason.
func RefusalReason(err error) string {
	var api *gd2.APIError
	switch {
	case errors.Is(err, ErrNoPlacement), errors.Is(err, gd2.ErrNoCapacity):
		return ReasonNoPlacement
	case errors.Is(err, gd2.ErrNodeDown):
		return ReasonGD2NodeDown
	case errors.Is(err, gd2.ErrInvalidOption):
		return ReasonInvalidOption
	case errors.Is(err, gd2.ErrLockBusy), errors.Is(err, gd2.ErrConflict):
		return ReasonGD2Busy
	case errors.Is(err, gd2.ErrPeerNotAlive):
		return ReasonPeerNotAlive
	case errors.Is(err, gd2.ErrPeerHasBricks):
		return ReasonPeerHasBricks
	case errors.Is(err, gd2.ErrRemovingSelf):
		return ReasonRemovingSelf
	case errors.Is(err, gd2.ErrUnauthorized):
		return ReasonGD2Unauthorized
	case errors.Is(err, gd2.ErrBrickPrepareFailed):
		return ReasonBrickPrepareFailed
	case errors.Is(err, gd2.ErrTxnStepFailed):
		return ReasonGD2StepFailed
	case errors.As(err, &api):
		return ReasonGD2Refused
	case errors.Is(err, gd2.ErrNoResponse):
		return ReasonGD2Unreachable
	}
	return engine.ReasonActionFailed
}

// PreparedOn returns the peers on which a code-2 answer says a step
// failed: for a replace-brick, the node GD2 chose for the new brick and
// began preparing it on.
func PreparedOn(err error) []string {
	var out []string
	for _, st := range gd2.TxnSteps(err) {
		if st.PeerID != "" && strings.HasPrefix(st.Step, "brick-replace.") && !slices.Contains(out, st.PeerID) {
			out = append(out, st.PeerID)
		}
	}
	return out
}

// ConditionReason is the reason of the Progressing condition, which every
// wait and failure sets.
func ConditionReason(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Type == operatorv1alpha1.ConditionProgressing {
			return c.Reason
		}
	}
	return ""
}
