package effects

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/engine"
)

func TestRefusalReasonNamesWhatGD2Refused(t *testing.T) {
	api := func(status int, items ...gd2.ErrorItem) error {
		return fmt.Errorf("replace brick: %w", &gd2.APIError{Status: status, Errors: items})
	}
	nodeDown := gd2.ErrorItem{Code: 1, Message: "node 0b9a4f3e-0000-4000-8000-000000000001 is probably down"}
	step := gd2.ErrorItem{Code: 2, Message: "a txn step failed", Fields: map[string]string{
		"peer-id": "0b9a4f3e-0000-4000-8000-000000000002", "step": "brick-replace.PrepareBricks", "error": "size 0 of data subvolume is too small"}}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"a node of the transaction down", api(500, nodeDown), ReasonGD2NodeDown},
		{"a failed brick preparation", api(500, step), ReasonBrickPrepareFailed},
		{"another failed transaction step", api(500, gd2.ErrorItem{Code: 2, Message: "a txn step failed", Fields: map[string]string{"peer-id": "p", "step": "vol-start.StartBricks", "error": "x"}}), ReasonGD2StepFailed},
		{"nowhere to place a brick", fmt.Errorf("x: %w", ErrNoPlacement), ReasonNoPlacement},
		{"the lock is held", api(409, gd2.ErrorItem{Code: 1, Message: "could not obtain lock: another conflicting transaction may be in progress"}), ReasonGD2Busy},
		{"a peer that is not alive", api(500, gd2.ErrorItem{Code: 1, Message: "peer is not alive"}), ReasonPeerNotAlive},
		{"a peer with bricks", api(403, gd2.ErrorItem{Code: 1, Message: "cannot delete peer, peer has bricks"}), ReasonPeerHasBricks},
		{"anything else GD2 answered", api(400, gd2.ErrorItem{Code: 1, Message: "something new"}), ReasonGD2Refused},
		{"not a GD2 error", errors.New("boom"), engine.ReasonActionFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RefusalReason(tc.err); got != tc.want {
				t.Fatalf("RefusalReason(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
	if got := PreparedOn(api(500, step)); len(got) != 1 || got[0] != "0b9a4f3e-0000-4000-8000-000000000002" {
		t.Fatalf("PreparedOn = %v, want the peer the preparation failed on", got)
	}
	if got := PreparedOn(api(500, nodeDown)); len(got) != 0 {
		t.Fatalf("PreparedOn of a node-down answer = %v, want none", got)
	}
}
