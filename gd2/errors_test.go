package gd2

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// allSentinels is every classification an APIError can carry.
var allSentinels = map[string]error{
	"ErrBadRequest": ErrBadRequest, "ErrUnauthorized": ErrUnauthorized, "ErrNotFound": ErrNotFound,
	"ErrConflict": ErrConflict, "ErrLockBusy": ErrLockBusy, "ErrAlreadyExists": ErrAlreadyExists,
	"ErrHasSnapshots": ErrHasSnapshots, "ErrPeerNotAlive": ErrPeerNotAlive, "ErrNodeDown": ErrNodeDown,
	"ErrPeerHasBricks": ErrPeerHasBricks, "ErrRemovingSelf": ErrRemovingSelf,
	"ErrTxnStepFailed": ErrTxnStepFailed, "ErrTxnTimeout": ErrTxnTimeout,
	"ErrVolumeNotStarted": ErrVolumeNotStarted, "ErrVolumeAlreadyStarted": ErrVolumeAlreadyStarted,
	"ErrVolumeAlreadyStopped": ErrVolumeAlreadyStopped, "ErrVolumeNotStopped": ErrVolumeNotStopped,
	"ErrUnsupportedVolumeType": ErrUnsupportedVolumeType, "ErrSelfHealDisabled": ErrSelfHealDisabled,
	"ErrNoCapacity": ErrNoCapacity, "ErrRebalanceNotStarted": ErrRebalanceNotStarted,
	"ErrInvalidOption": ErrInvalidOption, "ErrBrickPrepareFailed": ErrBrickPrepareFailed,
	"ErrHealNotDelivered": ErrHealNotDelivered,
}

// txnEnvelope is GD2's code-2 answer for one failing peer, fields in the
// order Go's encoder writes a map.
func txnEnvelope(peer, step, stepErr string) string {
	return fmt.Sprintf(`{"errors":[{"code":2,"message":"a txn step failed","fields":{"error":%q,"peer-id":%q,"step":%q}}]}`+"\n", stepErr, peer, step)
}

func envelope(msg string) string {
	return fmt.Sprintf(`{"errors":[{"code":1,"message":%q}]}`+"\n", msg)
}

// TestErrorClassificationCoversEveryAnswerInTheSheet feeds each status and
// message the GD2 fact sheet lists through a real HTTP round trip and checks
// the exact set of sentinels the error matches.
func TestErrorClassificationCoversEveryAnswerInTheSheet(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		body      string
		ctype     string // default JSON
		want      []string
		transient bool
	}{
		{name: "an unparsable request body is a bad request", status: 400, body: envelope("unable to parse the request"), want: []string{"ErrBadRequest"}},
		{name: "a malformed peer id is a bad request", status: 400, body: envelope("Invalid peer id passed"), want: []string{"ErrBadRequest"}},
		{name: "an unknown peer is not found", status: 404, body: envelope("peer not found"), want: []string{"ErrNotFound"}},
		{name: "adding a known peer address is a conflict that already exists", status: 409, body: envelope("Peer exists with given addresses (ID: 5d8f2c1e-0000-4000-8000-000000000001)"), want: []string{"ErrConflict", "ErrAlreadyExists"}},
		{name: "a lock timeout is a transient conflict", status: 409, body: envelope("could not obtain lock: another conflicting transaction may be in progress"), want: []string{"ErrConflict", "ErrLockBusy"}, transient: true},
		{name: "an unreachable host on peer add is a plain server error", status: 500, body: envelope("could not connect to host gd2-9:24008"), want: nil},
		{name: "a peer of another cluster is a plain server error", status: 500, body: envelope("peer is part of another cluster"), want: nil},
		{name: "a failed peer edit is a plain server error", status: 500, body: envelope("Transaction to update peer failed"), want: nil},
		{name: "removing the serving peer is refused", status: 400, body: envelope("removing self is disallowed."), want: []string{"ErrBadRequest", "ErrRemovingSelf"}},
		{name: "deleting a dead peer says it is not alive", status: 500, body: envelope("peer is not alive"), want: []string{"ErrPeerNotAlive"}},
		{name: "deleting a peer with bricks is forbidden", status: 403, body: envelope("cannot delete peer, peer has bricks"), want: []string{"ErrPeerHasBricks"}},
		{name: "creating an existing volume is a bad request that already exists", status: 400, body: envelope("volume already exists"), want: []string{"ErrBadRequest", "ErrAlreadyExists"}},
		{name: "an invalid volume name is a bad request", status: 400, body: envelope("invalid volume name"), want: []string{"ErrBadRequest"}},
		{name: "a duplicate brick is a bad request", status: 400, body: envelope("duplicate brick entry"), want: []string{"ErrBadRequest"}},
		{name: "a planner without devices has no capacity", status: 500, body: envelope("no devices registered or available for allocating bricks"), want: []string{"ErrNoCapacity"}},
		{name: "a planner without space has no capacity", status: 500, body: envelope("no space available or all the devices are not registered"), want: []string{"ErrNoCapacity"}},
		{name: "a brick smaller than the minimum is a plain server error", status: 500, body: envelope("brick size is too small"), want: nil},
		{name: "starting a started volume is refused", status: 400, body: envelope("volume already started"), want: []string{"ErrBadRequest", "ErrVolumeAlreadyStarted"}},
		{name: "stopping a stopped volume is refused", status: 400, body: envelope("volume already stopped"), want: []string{"ErrBadRequest", "ErrVolumeAlreadyStopped"}},
		{name: "an operation needing a started volume is refused", status: 400, body: envelope("volume not started"), want: []string{"ErrBadRequest", "ErrVolumeNotStarted"}},
		{name: "deleting a started volume is refused", status: 400, body: envelope("volume must be in stopped state before deleting"), want: []string{"ErrBadRequest", "ErrVolumeNotStopped"}},
		{name: "deleting a volume with snapshots fails a dependency", status: 424, body: envelope("volume has snapshots"), want: []string{"ErrHasSnapshots"}},
		{name: "expanding a missing volume is a 500 that is still not found", status: 500, body: envelope("volume not found"), want: []string{"ErrNotFound"}},
		{name: "an in-place expand without room has no capacity", status: 400, body: envelope("Space not sufficient on device"), want: []string{"ErrBadRequest", "ErrNoCapacity"}},
		{
			name: "a failed v1 transaction step carries peer and step", status: 500,
			body: `{"errors":[{"code":2,"message":"a txn step failed","fields":{"peer-id":"p1","step":"vol-expand.ValidateAndPrepare","error":"invalid number of bricks"}}]}`,
			want: []string{"ErrTxnStepFailed"},
		},
		{
			name: "an unknown volume option fails the validate step with code 2 and is an invalid option", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000001", "vol-option.Validate", "validation failed for volume option: option not found: no.such-option"),
			want: []string{"ErrTxnStepFailed", "ErrInvalidOption"},
		},
		{
			name: "an advanced volume option without its flag fails the validate step with code 2 and is an invalid option", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000001", "vol-option.Validate", "validation failed for volume option: option cluster/replicate.self-heal-daemon is an advanced option. To set it pass the advanced flag"),
			want: []string{"ErrTxnStepFailed", "ErrInvalidOption"},
		},
		{
			name: "a bad option value fails the xlator validation with code 2 and is an invalid option", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000001", "vol-option.Validate", "validation failed for volume option:: invalid value"),
			want: []string{"ErrTxnStepFailed", "ErrInvalidOption"},
		},
		{name: "an unknown option on volume create is a 400 invalid option", status: 400, body: envelope("option not found: no.such-option"), want: []string{"ErrBadRequest", "ErrInvalidOption"}},
		{name: "an advanced option on volume create without its flag is a 400 invalid option", status: 400, body: envelope("option cluster/replicate.self-heal-daemon is an advanced option. To set it pass the advanced flag"), want: []string{"ErrBadRequest", "ErrInvalidOption"}},
		{name: "a deprecated option on volume create without its flag is a 400 invalid option", status: 400, body: envelope("Option debug/io-stats.count-fop-hits will be deprecated in future releases. To set it pass the deprecated flag"), want: []string{"ErrBadRequest", "ErrInvalidOption"}},
		{name: "a bad option value on volume create is a 400 invalid option", status: 400, body: envelope("Failed to validate value(cluster/replicate.self-heal-daemon) for key(maybe): valid values are on, off"), want: []string{"ErrBadRequest", "ErrInvalidOption"}},
		{
			name: "a replace-brick served off the source node fails preparing the 0-byte brick, not for capacity", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000003", "brick-replace.PrepareBricks", "size 0 of data subvolume is too small"),
			want: []string{"ErrTxnStepFailed", "ErrBrickPrepareFailed"},
		},
		{
			name: "lvcreate short of extents in the prepare step is a prepare failure, not a capacity refusal", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000003", "brick-replace.PrepareBricks", `Volume group "gluster-dev-sdb" has insufficient free space (10 extents): 128 required.`),
			want: []string{"ErrTxnStepFailed", "ErrBrickPrepareFailed"},
		},
		{
			name: "an LV name clash in the prepare step is a prepare failure, not an existing object", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000003", "brick-replace.PrepareBricks", `Logical Volume "brick_vol1_s0_b1" already exists in volume group "gluster-dev-sdb"`),
			want: []string{"ErrTxnStepFailed", "ErrBrickPrepareFailed"},
		},
		{
			name: "an expand whose new brick fails to initialise is a prepare failure", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000002", "vol-expand.InitBricks", "brick path is already in use"),
			want: []string{"ErrTxnStepFailed", "ErrBrickPrepareFailed"},
		},
		{
			name: "a brick that fails to start after replace-brick is only a step failure", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000003", "vol-start.StartBricks", "brick process exited"),
			want: []string{"ErrTxnStepFailed"},
		},
		{
			name: "a step error naming a down node is a step failure, not the liveness refusal", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000003", "vol-expand.NotifyClients", "node 5d8f2c1e-0000-4000-8000-000000000002 is probably down"),
			want: []string{"ErrTxnStepFailed"},
		},
		{
			name: "a heal trigger the self-heal daemon did not receive is not delivered", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000003", StepSelfHealHeal, "connection is shut down"),
			want: []string{"ErrTxnStepFailed", "ErrHealNotDelivered"},
		},
		{
			name: "an injected heal failure at another step is only a step failure", status: 500,
			body: txnEnvelope("5d8f2c1e-0000-4000-8000-000000000003", "SelfHeal.Injected", "injected fault"),
			want: []string{"ErrTxnStepFailed"},
		},
		{name: "heal on a distribute volume is unsupported", status: 400, body: envelope("invalid operation for this volume type"), want: []string{"ErrBadRequest", "ErrUnsupportedVolumeType"}},
		{name: "heal with the daemon off is refused", status: 400, body: envelope("self heal option is disabled for this volume"), want: []string{"ErrBadRequest", "ErrSelfHealDisabled"}},
		{name: "a failing glfsheal is a plain server error", status: 500, body: envelope("heal info operation failed"), want: nil},
		{name: "replace-brick without volume groups has no capacity", status: 500, body: envelope("No volume groups are available"), want: []string{"ErrNoCapacity"}},
		{name: "replace-brick with nothing fitting has no capacity", status: 500, body: envelope("peer id of new brick could not be parsed"), want: []string{"ErrNoCapacity"}},
		{name: "a bad rebalance option is a bad request", status: 400, body: envelope("invalid Rebalance start option"), want: []string{"ErrBadRequest"}},
		{name: "rebalance of a single-subvolume volume is unsupported", status: 400, body: envelope("not a distribute volume"), want: []string{"ErrBadRequest", "ErrUnsupportedVolumeType"}},
		{name: "stopping a rebalance that never ran is refused", status: 400, body: envelope("rebalance not started"), want: []string{"ErrBadRequest", "ErrRebalanceNotStarted"}},
		{name: "rebalance status before any start is not found", status: 404, body: envelope("rebalance process not found"), want: []string{"ErrNotFound"}},
		{name: "registering a known device already exists", status: 400, body: envelope("device already exists"), want: []string{"ErrBadRequest", "ErrAlreadyExists"}},
		{name: "a failing device preparation is a plain server error", status: 500, body: envelope("transaction to prepare device failed"), want: nil},
		{name: "reading an unknown device is a 500 that is still not found", status: 500, body: envelope("device does not exist in the given peer"), want: []string{"ErrNotFound"}},
		{name: "an unknown cluster option is invalid", status: 500, body: envelope("Invalid global option: cluster.nonsense"), want: []string{"ErrInvalidOption"}},
		{name: "a down node in a transaction is reported", status: 500, body: envelope("node 5d8f2c1e-0000-4000-8000-000000000001 is probably down"), want: []string{"ErrNodeDown"}},
		{name: "several down nodes are reported", status: 500, body: envelope("probably some of the nodes are down"), want: []string{"ErrNodeDown"}},
		{name: "a v2 transaction timeout is transient", status: 500, body: envelope("txn timeout"), want: []string{"ErrTxnTimeout"}, transient: true},
		{name: "a missing token is unauthorized", status: 401, body: envelope("'Authorization' header is required"), want: []string{"ErrUnauthorized"}},
		{name: "a wrong qsh is unauthorized", status: 401, body: envelope("invalid qsh claim in token"), want: []string{"ErrUnauthorized"}},
		{name: "an expired token is unauthorized", status: 401, body: envelope("Token is expired"), want: []string{"ErrUnauthorized"}},
		{name: "the router's plain-text 404 is still not found", status: 404, body: "404 page not found\n", ctype: "text/plain; charset=utf-8", want: []string{"ErrNotFound"}},
		{name: "a proxy's HTML gateway error is transient", status: 502, body: "<html><body>Bad Gateway</body></html>", ctype: "text/html", want: nil, transient: true},
		{name: "an empty 503 is transient", status: 503, body: "", ctype: "-", want: nil, transient: true},
		{name: "an empty 500 is a plain server error", status: 500, body: "", ctype: "-", want: nil},
		{name: "an envelope with no items keeps the raw body", status: 500, body: `{"errors":[]}`, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans := jsonAnswer(tc.status, tc.body)
			switch tc.ctype {
			case "":
			case "-":
				ans.ctype = ""
			default:
				ans.ctype = tc.ctype
			}
			rec := newRecorder(t, ans)
			c := rec.client(t, func(o *Options) { o.Retry = &RetryPolicy{MaxAttempts: 1} })
			_, err := c.GetVolume(context.Background(), "vol1")
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("want *APIError, got %T %v", err, err)
			}
			if apiErr.Status != tc.status || apiErr.Op != OpVolumesGet || apiErr.Path != "/v1/volumes/vol1" {
				t.Errorf("APIError{Status:%d Op:%s Path:%s}", apiErr.Status, apiErr.Op, apiErr.Path)
			}
			var got []string
			for name, s := range allSentinels {
				if errors.Is(err, s) {
					got = append(got, name)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("matches %v, want %v (error: %v)", got, want, err)
			}
			if IsTransient(err) != tc.transient {
				t.Errorf("IsTransient = %v, want %v", !tc.transient, tc.transient)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Error("empty error text")
			}
		})
	}
}

func TestTxnStepFailuresExposePeerAndStepOfEveryFailingPeer(t *testing.T) {
	body := `{"errors":[` +
		`{"code":2,"message":"a txn step failed","fields":{"peer-id":"p1","step":"vol-replace-brick.Prepare","error":"disk gone"}},` +
		`{"code":2,"message":"a txn step failed","fields":{"peer-id":"p2","step":"vol-replace-brick.Prepare","error":"timeout"}}]}`
	e := decodeError(OpVolumesReplaceBrick, http.MethodPost, "/v1/volumes/v/replacebrick", 500, []byte(body))
	steps := e.TxnStepFailures()
	if len(steps) != 2 {
		t.Fatalf("want 2 failures, got %d", len(steps))
	}
	if steps[1].PeerID() != "p2" || steps[1].Step() != "vol-replace-brick.Prepare" || steps[1].StepError() != "timeout" {
		t.Errorf("second failure = %+v", steps[1])
	}
	if !strings.Contains(e.Error(), "on peer p1") {
		t.Errorf("error text %q does not name the peer", e.Error())
	}
}

func TestNetworkFailuresAreTransientButCancellationIsNot(t *testing.T) {
	rec := newRecorder(t)
	url := rec.srv.URL
	rec.srv.Close() // nothing listens any more
	c, err := New(Options{Endpoint: url, Retry: &RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListPeers(context.Background(), Filter{})
	if !errors.Is(err, ErrNoResponse) || !IsTransient(err) {
		t.Fatalf("a refused connection should be ErrNoResponse and transient: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.ListPeers(ctx, Filter{})
	if !errors.Is(err, context.Canceled) || IsTransient(err) {
		t.Fatalf("a cancelled call must not be transient: %v", err)
	}
	if IsTransient(nil) {
		t.Fatal("nil is not transient")
	}
}

func TestInvalidIdentifiersFailBeforeAnyRequest(t *testing.T) {
	rec := newRecorder(t)
	c := rec.client(t)
	ctx := context.Background()
	errs := []error{
		c.DeletePeer(ctx, ""),
		c.DeletePeer(ctx, "../volumes"),
		c.DeleteVolume(ctx, "a/b"),
		c.EditDevice(ctx, "p1", "/dev/../etc", DeviceEnabled),
		c.EditDevice(ctx, "p1", "", DeviceEnabled),
	}
	for i, err := range errs {
		if !errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrNotFound) {
			t.Errorf("call %d: want ErrInvalidArgument and not ErrNotFound, got %v", i, err)
		}
	}
	if n := len(rec.seen()); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
}
