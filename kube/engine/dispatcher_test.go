package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// recordingSyncer counts syncs per key and answers with scripted results.
type recordingSyncer struct {
	mu     sync.Mutex
	calls  map[Key]int
	result func(k Key, n int) (Result, error)
	done   chan Key
}

func (r *recordingSyncer) Sync(_ context.Context, k Key) (Result, error) {
	r.mu.Lock()
	r.calls[k]++
	n := r.calls[k]
	r.mu.Unlock()
	res, err := r.result(k, n)
	r.done <- k
	return res, err
}

func TestDispatcherRetriesFailuresAndStopsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d, err := NewDispatcher(DispatcherConfig{Workers: 3, Metrics: NewMetrics(), Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordingSyncer{calls: map[Key]int{}, done: make(chan Key, 100), result: func(k Key, n int) (Result, error) {
		switch {
		case k.Name == "flaky" && n == 1:
			return Result{}, errors.New("injected failure")
		case k.Name == "waiter" && n == 1:
			return Result{RequeueAfter: 10 * time.Millisecond}, nil
		}
		return Result{}, nil
	}}
	d.Register("test", rs)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { d.Run(ctx); close(stopped) }()
	for _, n := range []string{"flaky", "waiter", "plain"} {
		d.Enqueue(Key{Machine: "test", Namespace: "ns", Name: n})
	}
	want := map[string]int{"flaky": 2, "waiter": 2, "plain": 1}
	seen := map[string]int{}
	deadline := time.After(30 * time.Second)
	for seen["flaky"] < 2 || seen["waiter"] < 2 || seen["plain"] < 1 {
		select {
		case k := <-rs.done:
			seen[k.Name]++
		case <-deadline:
			t.Fatalf("syncs seen %v, want %v", seen, want)
		}
	}
	cancel()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	for n, c := range want {
		if seen[n] != c {
			t.Errorf("%s synced %d times, want %d", n, seen[n], c)
		}
	}
}

func TestDispatcherRejectsZeroWorkers(t *testing.T) {
	if _, err := NewDispatcher(DispatcherConfig{Workers: 0, Log: zap.NewNop()}); err == nil {
		t.Fatal("zero workers must be refused")
	}
}

// A key that keeps failing is retried at least every maxRetryDelay, not
// after client-go's default ceiling of 1,000 s.
func TestRetryBackoffIsCapped(t *testing.T) {
	l := retryLimiter()
	k := Key{Machine: "node", Namespace: "ns", Name: "n"}
	var last time.Duration
	for range 30 {
		last = l.When(k)
		if last > maxRetryDelay {
			t.Fatalf("retry %d waits %s, beyond %s", l.NumRequeues(k), last, maxRetryDelay)
		}
	}
	if last != maxRetryDelay {
		t.Fatalf("after 30 failures the retry waits %s, want the cap %s", last, maxRetryDelay)
	}
	l.Forget(k)
	if d := l.When(k); d > 10*time.Millisecond {
		t.Fatalf("after a success the first retry waits %s, want a few ms", d)
	}
}
