package gd2

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// Peer ids as GD2 prints them in its answers.
const (
	downPeer   = "5d8f2c1e-0000-4000-8000-000000000002"
	targetPeer = "5d8f2c1e-0000-4000-8000-000000000003"
)

// TestRealGD2RefusalsOnTheCallsThatGetThem sends each call the exact answer
// real GD2 gives it (status and JSON as the fact sheet records them) and
// checks the classes the operator decides on, the classes it must not see,
// and the accessors for the down node and the failed steps.
func TestRealGD2RefusalsOnTheCallsThatGetThem(t *testing.T) {
	ctx := context.Background()
	nodeDown := envelope("node " + downPeer + " is probably down")
	v2Down := envelope("probably some of the nodes are down")
	prepare0 := txnEnvelope(targetPeer, StepReplaceBrickPrepareBricks, "size 0 of data subvolume is too small")
	optNotFound := txnEnvelope(downPeer, StepVolOptionValidate, "validation failed for volume option: option not found: no.such-option")
	rb := func(c *Client) error {
		_, err := c.ReplaceBrick(ctx, "vol1", ReplaceBrickRequest{SrcPeerID: downPeer, SrcBrickPath: "/bricks/vol1/s0/b1"})
		return err
	}
	setOpt := func(c *Client) error {
		_, err := c.SetVolumeOptions(ctx, "vol1", VolumeOptionRequest{Options: map[string]string{"no.such-option": "1"}})
		return err
	}
	cases := []struct {
		name     string
		call     func(*Client) error
		status   int
		body     string
		want     []error
		not      []error
		downNode string // "" means DownNode reports !ok
		steps    []TxnStep
	}{
		{
			name: "replace-brick with a node of the volume down is refused naming the node", call: rb,
			status: 500, body: nodeDown, want: []error{ErrNodeDown}, not: []error{ErrNoCapacity, ErrTxnStepFailed, ErrBrickPrepareFailed, ErrPeerNotAlive},
			downNode: downPeer,
		},
		{
			name: "expand with any peer down is refused naming the node",
			call: func(c *Client) error {
				_, err := c.ExpandVolume(ctx, "vol1", VolumeExpandRequest{Size: 1 << 30, Distribute: 1})
				return err
			},
			status: 500, body: nodeDown, want: []error{ErrNodeDown}, not: []error{ErrNoCapacity, ErrTxnStepFailed}, downNode: downPeer,
		},
		{
			name: "setting volume options with any peer down is refused naming the node", call: setOpt,
			status: 500, body: nodeDown, want: []error{ErrNodeDown}, not: []error{ErrInvalidOption, ErrTxnStepFailed}, downNode: downPeer,
		},
		{
			name: "resetting volume options with any peer down is refused naming the node",
			call: func(c *Client) error {
				return c.ResetVolumeOptions(ctx, "vol1", VolumeOptionResetRequest{Options: []string{"cluster/replicate.self-heal-daemon"}})
			},
			status: 500, body: nodeDown, want: []error{ErrNodeDown}, not: []error{ErrInvalidOption}, downNode: downPeer,
		},
		{
			name:   "a heal trigger with a brick's node down is refused naming the node",
			call:   func(c *Client) error { return c.Heal(ctx, "vol1", HealIndex) },
			status: 500, body: nodeDown, want: []error{ErrNodeDown}, not: []error{ErrSelfHealDisabled}, downNode: downPeer,
		},
		{
			name: "volume create with a node down is the v2 refusal that names no node",
			call: func(c *Client) error {
				_, err := c.CreateVolume(ctx, VolumeCreateRequest{Name: "vol1", Size: 1 << 30, Replica: 3})
				return err
			},
			status: 500, body: v2Down, want: []error{ErrNodeDown}, not: []error{ErrNoCapacity},
		},
		{
			name:   "volume start with a node down is the v2 refusal",
			call:   func(c *Client) error { _, err := c.StartVolume(ctx, "vol1", false); return err },
			status: 500, body: v2Down, want: []error{ErrNodeDown},
		},
		{
			name:   "volume stop with a node down is the v2 refusal",
			call:   func(c *Client) error { _, err := c.StopVolume(ctx, "vol1"); return err },
			status: 500, body: v2Down, want: []error{ErrNodeDown},
		},
		{
			name:   "volume delete with a node down is the v2 refusal",
			call:   func(c *Client) error { return c.DeleteVolume(ctx, "vol1") },
			status: 500, body: v2Down, want: []error{ErrNodeDown},
		},
		{
			name:   "deleting a dead peer is its own class, not a down transaction node",
			call:   func(c *Client) error { return c.DeletePeer(ctx, downPeer) },
			status: 500, body: envelope("peer is not alive"), want: []error{ErrPeerNotAlive}, not: []error{ErrNodeDown},
		},
		{
			name: "an unknown volume option is a code-2 validate failure and an invalid option", call: setOpt,
			status: 500, body: optNotFound, want: []error{ErrInvalidOption, ErrTxnStepFailed}, not: []error{ErrNodeDown, ErrBrickPrepareFailed},
			steps: []TxnStep{{PeerID: downPeer, Step: StepVolOptionValidate, Error: "validation failed for volume option: option not found: no.such-option"}},
		},
		{
			name: "an unknown option on volume create is a 400 without the prefix and an invalid option",
			call: func(c *Client) error {
				_, err := c.CreateVolume(ctx, VolumeCreateRequest{Name: "vol1", Size: 1 << 30, Replica: 3})
				return err
			},
			status: 400, body: envelope("option not found: no.such-option"), want: []error{ErrInvalidOption, ErrBadRequest}, not: []error{ErrTxnStepFailed},
		},
		{
			name: "replace-brick served off the source node fails preparing a 0-byte brick on the target", call: rb,
			status: 500, body: prepare0, want: []error{ErrBrickPrepareFailed, ErrTxnStepFailed}, not: []error{ErrNoCapacity, ErrNodeDown},
			steps: []TxnStep{{PeerID: targetPeer, Step: StepReplaceBrickPrepareBricks, Error: "size 0 of data subvolume is too small"}},
		},
		{
			name: "replace-brick with no volume group left is a capacity refusal", call: rb,
			status: 500, body: envelope("No volume groups are available"), want: []error{ErrNoCapacity}, not: []error{ErrBrickPrepareFailed, ErrTxnStepFailed},
		},
		{
			name: "replace-brick where no device fits is a capacity refusal", call: rb,
			status: 500, body: envelope("peer id of new brick could not be parsed"), want: []error{ErrNoCapacity}, not: []error{ErrBrickPrepareFailed},
		},
		{
			name:   "a heal trigger with the self-heal daemon off is refused",
			call:   func(c *Client) error { return c.Heal(ctx, "vol1", HealIndex) },
			status: 400, body: envelope("self heal option is disabled for this volume"), want: []error{ErrSelfHealDisabled, ErrBadRequest},
			not: []error{ErrUnsupportedVolumeType, ErrVolumeNotStarted},
		},
		{
			name:   "a heal trigger on a volume that is not started is refused",
			call:   func(c *Client) error { return c.Heal(ctx, "vol1", HealFull) },
			status: 400, body: envelope("volume not started"), want: []error{ErrVolumeNotStarted, ErrBadRequest}, not: []error{ErrSelfHealDisabled},
		},
		{
			name:   "heal info on a distribute volume is an unsupported volume type",
			call:   func(c *Client) error { _, err := c.HealInfo(ctx, "vol1", HealInfoSummary); return err },
			status: 400, body: envelope("invalid operation for this volume type"), want: []error{ErrUnsupportedVolumeType, ErrBadRequest},
		},
		{
			name:   "heal info on a volume that is not started is refused",
			call:   func(c *Client) error { _, err := c.HealInfo(ctx, "vol1", HealInfoEntries); return err },
			status: 400, body: envelope("volume not started"), want: []error{ErrVolumeNotStarted, ErrBadRequest},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t, jsonAnswer(tc.status, tc.body))
			c := rec.client(t, func(o *Options) { o.Retry = &RetryPolicy{MaxAttempts: 1} })
			err := tc.call(c)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.status {
				t.Fatalf("want *APIError with status %d, got %v", tc.status, err)
			}
			if n := len(rec.seen()); n != 1 {
				t.Errorf("%d requests sent, want 1 (a refusal is not repeated or followed up)", n)
			}
			for _, s := range tc.want {
				if !errors.Is(err, s) {
					t.Errorf("does not match %v: %v", s, err)
				}
			}
			for _, s := range tc.not {
				if errors.Is(err, s) {
					t.Errorf("matches %v but must not: %v", s, err)
				}
			}
			wrapped := fmt.Errorf("sync: %w", err) // accessors see through wrapping
			id, ok := DownNode(wrapped)
			if ok != (tc.downNode != "") || id != tc.downNode {
				t.Errorf("DownNode = %q, %v; want %q", id, ok, tc.downNode)
			}
			if got := TxnSteps(wrapped); !slices.Equal(got, tc.steps) {
				t.Errorf("TxnSteps = %+v, want %+v", got, tc.steps)
			}
			if IsTransient(err) {
				t.Error("a refusal that needs the cluster to change is not transient")
			}
		})
	}
}

func TestTxnStepsListEveryFailingPeerInOrder(t *testing.T) {
	body := `{"errors":[` +
		`{"code":2,"message":"a txn step failed","fields":{"error":"mount failed","peer-id":"p1","step":"vol-expand.InitBricks"}},` +
		`{"code":2,"message":"a txn step failed","fields":{"error":"brick path in use","peer-id":"p2","step":"vol-expand.ValidateBricks"}}]}`
	err := error(decodeError(OpVolumesExpand, http.MethodPost, "/v1/volumes/v/expand", 500, []byte(body)))
	want := []TxnStep{
		{PeerID: "p1", Step: StepVolExpandInitBricks, Error: "mount failed"},
		{PeerID: "p2", Step: StepVolExpandValidateBricks, Error: "brick path in use"},
	}
	if got := TxnSteps(err); !slices.Equal(got, want) {
		t.Fatalf("TxnSteps = %+v, want %+v", got, want)
	}
	if !errors.Is(err, ErrBrickPrepareFailed) {
		t.Error("expand brick steps are brick preparation")
	}
	if TxnSteps(nil) != nil || TxnSteps(errors.New("x")) != nil {
		t.Error("TxnSteps of a non-API error must be nil")
	}
	if TxnSteps(decodeError(OpVolumesGet, http.MethodGet, "/v1/volumes/v", 404, []byte(envelope("volume not found")))) != nil {
		t.Error("TxnSteps of a code-1 answer must be nil")
	}
	if _, ok := DownNode(nil); ok {
		t.Error("DownNode(nil) reports a node")
	}
}
