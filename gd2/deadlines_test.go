package gd2

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A read that GD2 does not answer is sent again beside the first, the
// second answer is the call's, and the hung exchange is cancelled rather
// than left to the client's whole timeout.
func TestAHungReadIsHedgedAndTheHungExchangeCancelled(t *testing.T) {
	var calls atomic.Int32
	cancelled := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-r.Context().Done() // hung: no answer until the client gives up on it
			close(cancelled)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id":"5a9b5c2e-6b2a-4f49-9c1e-3f2a1b0c9d8e","name":"p1","online":true}]`))
	}))
	defer srv.Close()
	c, err := New(Options{Endpoint: srv.URL, Timeout: time.Hour, Retry: &RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var hedged []Operation
	c.observer = hedgeRecorder{&hedged}
	c.hedgeAfter = func(Operation) time.Duration { return time.Millisecond }
	peers, err := c.ListPeers(context.Background(), Filter{})
	if err != nil {
		t.Fatalf("the hedged read failed: %v", err)
	}
	if len(peers) != 1 || peers[0].Name != "p1" {
		t.Errorf("peers %+v, want the second exchange's answer", peers)
	}
	<-cancelled // the test's own timeout catches a hung exchange left running
	if n := calls.Load(); n != 2 {
		t.Errorf("%d exchanges, want the read and one hedge", n)
	}
	if len(hedged) != 1 || hedged[0] != OpPeersList {
		t.Errorf("hedges observed %v, want one of %s", hedged, OpPeersList)
	}
}

// Two failed exchanges return the error; a hedge is sent once only.
func TestAHedgedReadThatFailsTwiceReturnsTheError(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"errors":[{"code":1,"message":"boom"}]}`))
	}))
	defer srv.Close()
	c, err := New(Options{Endpoint: srv.URL, Retry: &RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c.hedgeAfter = func(Operation) time.Duration { return time.Hour }
	if _, err := c.ListPeers(context.Background(), Filter{}); err == nil {
		t.Fatal("a 500 read succeeded")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d exchanges for a read that failed at once, want 1 (no hedge before its time)", n)
	}
}

// The deadlines are sized to the call: reads and GD2's transactions keep
// the client's timeout, an edit of one object gets less, never more than
// the client's.
func TestAttemptTimeoutIsSizedToTheCall(t *testing.T) {
	c := &Client{timeout: 30 * time.Second}
	short := &Client{timeout: 5 * time.Second}
	for _, tc := range []struct {
		c      *Client
		method string
		op     Operation
		want   time.Duration
	}{
		{c, http.MethodGet, OpHealInfo, 30 * time.Second},
		{c, http.MethodPost, OpVolumesReplaceBrick, 30 * time.Second},
		{c, http.MethodPost, OpVolumesCreate, 30 * time.Second},
		{c, http.MethodDelete, OpPeersDelete, 30 * time.Second},
		{c, http.MethodPost, OpVolumesOptionsSet, quickMutation},
		{c, http.MethodPost, OpPeersEdit, quickMutation},
		{short, http.MethodPost, OpVolumesOptionsSet, 5 * time.Second},
	} {
		if got := tc.c.attemptTimeout(tc.method, tc.op); got != tc.want {
			t.Errorf("%s %s at timeout %s: %s, want %s", tc.method, tc.op, tc.c.timeout, got, tc.want)
		}
	}
	if hedgeAfter(OpHealInfo) <= hedgeAfter(OpPeersList) {
		t.Error("heal-info, which runs glfsheal, is hedged no later than a peer list")
	}
}

type hedgeRecorder struct{ ops *[]Operation }

func (hedgeRecorder) ObserveRequest(Operation, int, time.Duration) {}
func (h hedgeRecorder) ObserveHedge(op Operation)                  { *h.ops = append(*h.ops, op) }
