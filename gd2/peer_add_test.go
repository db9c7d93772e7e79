package gd2

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Two peer adds through one client never reach GD2 at once: the second
// waits until the first is answered.
func TestPeerAddsThroughOneClientGoOneAtATime(t *testing.T) {
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	var inFlight, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"5f6c0c8e-8a54-4b6e-9f3f-3c2b8c1e2a01","name":"n","peer-addresses":["a:24008"],"online":true}`))
	}))
	defer srv.Close()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // a failure must not leave the handlers held
	c, err := New(Options{Endpoint: srv.URL, Secret: "s", Retry: &RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	add := func() {
		_, err := c.AddPeer(context.Background(), PeerAddRequest{Addresses: []string{"a:24008"}})
		done <- err
	}
	go add()
	<-arrived
	go add()
	// The second add must not reach the server while the first is held.
	select {
	case <-arrived:
		t.Fatal("a second peer add reached GD2 while the first was in flight")
	case <-time.After(100 * time.Millisecond):
	}
	free()
	<-arrived
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d peer adds were in flight at once, want 1", m)
	}
}
