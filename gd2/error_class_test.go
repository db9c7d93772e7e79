package gd2

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestClassOfPutsEveryFailureInOneFixedClass(t *testing.T) {
	api := func(status int, body string) error {
		return decodeError(OpVolumesStatus, http.MethodGet, "/v1/volumes/v/status", status, []byte(body))
	}
	cases := []struct {
		name string
		err  error
		want ErrorClass
	}{
		{"no error has no class", nil, ""},
		{"the v1 liveness gate is node_down", api(500, envelope("node 5d8f2c1e is probably down")), ClassNodeDown},
		{"the v2 liveness gate is node_down", api(500, envelope("probably some of the nodes are down")), ClassNodeDown},
		{"deleting a dead peer is node_down", api(500, envelope("peer is not alive")), ClassNodeDown},
		{"a lock timeout is lock_conflict", api(409, lockBody), ClassLockConflict},
		{"a peer that exists is refused, not a lock conflict", api(409, envelope("Peer exists with given addresses (ID: x)")), ClassRefused},
		{"a 404 is not_found", api(404, envelope("volume not found")), ClassNotFound},
		{"GD2's 500 for a missing device is not_found", api(500, envelope("device does not exist in the given peer")), ClassNotFound},
		{"a 401 is auth", api(401, envelope("invalid qsh claim in token")), ClassAuth},
		{"a code-2 step failure is txn_step", api(500, txnEnvelope("p1", "vol-expand.InitBricks", "lvcreate failed")), ClassTxnStep},
		{"GD2's transaction timeout is timeout", api(500, envelope("txn timeout")), ClassTimeout},
		{"a gateway timeout is timeout", api(504, ""), ClassTimeout},
		{"a validation 400 is refused", api(400, envelope("invalid volume name")), ClassRefused},
		{"a volume not started is refused", api(400, envelope("volume not started")), ClassRefused},
		{"a peer with bricks (403) is refused", api(403, envelope("cannot delete peer, peer has bricks")), ClassRefused},
		{"any other 500 is server", api(500, envelope("heal info operation failed")), ClassServer},
		{"a 503 is server", api(503, ""), ClassServer},
		{"no response is transport", &noResponseError{op: OpPeersList, err: errors.New("connection refused")}, ClassTransport},
		{"no response within the deadline is timeout", &noResponseError{op: OpPeersList, err: context.DeadlineExceeded}, ClassTimeout},
		{"a network timeout is timeout", &noResponseError{op: OpPeersList, err: timeoutErr{}}, ClassTimeout},
		{"the caller's cancellation is canceled", &noResponseError{op: OpPeersList, err: context.Canceled}, ClassCanceled},
		{"an undecodable 2xx is bad_response", fmt.Errorf("gd2 x: %w: eof", ErrBadResponse), ClassBadResponse},
		{"anything else is other", errors.New("build request"), ClassOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassOf(tc.err)
			if got != tc.want {
				t.Fatalf("ClassOf(%v) = %q, want %q", tc.err, got, tc.want)
			}
			if got != "" && !slices.Contains(errorClasses, got) {
				t.Fatalf("class %q is not in errorClasses", got)
			}
			if wrapped := fmt.Errorf("layer: %w", tc.err); tc.err != nil && ClassOf(wrapped) != tc.want {
				t.Fatalf("wrapping changed the class to %q", ClassOf(wrapped))
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

type classObservations struct {
	observations
	mu      sync.Mutex
	classes []ErrorClass
}

func (o *classObservations) ObserveError(_ Operation, class ErrorClass) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.classes = append(o.classes, class)
}

func TestErrorObserverSeesTheClassOfEveryFailedAttempt(t *testing.T) {
	rec := newRecorder(t, jsonAnswer(409, lockBody), jsonAnswer(200, `[]`))
	obs := &classObservations{}
	c := rec.client(t, func(o *Options) { o.Observer = obs })
	if _, err := c.ListPeers(context.Background(), Filter{}); err != nil {
		t.Fatal(err)
	}
	if want := []ErrorClass{ClassLockConflict}; !slices.Equal(obs.classes, want) {
		t.Fatalf("classes %v, want %v", obs.classes, want)
	}
	if len(obs.got) != 2 {
		t.Fatalf("requests observed %v, want both attempts", obs.got)
	}

	rec = newRecorder(t, jsonAnswer(404, envelope("volume not found")))
	obs = &classObservations{}
	c = rec.client(t, func(o *Options) { o.Observer = obs })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.VolumeStatus(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v", err)
	}
	if want := []ErrorClass{ClassNotFound}; !slices.Equal(obs.classes, want) {
		t.Fatalf("classes %v, want %v", obs.classes, want)
	}
}

// errorClasses lists every class ClassOf can return.
var errorClasses = []ErrorClass{
	ClassNodeDown, ClassLockConflict, ClassNotFound, ClassAuth, ClassTxnStep, ClassTimeout,
	ClassRefused, ClassServer, ClassTransport, ClassBadResponse, ClassCanceled, ClassOther,
}
