package gd2

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

var lockBody = envelope("could not obtain lock: another conflicting transaction may be in progress")

func TestRetryPolicyRetriesOnlyWhereItIsSafe(t *testing.T) {
	ok := jsonAnswer(http.StatusOK, `{"name":"vol1","state":"Started"}`)
	cases := []struct {
		name      string
		answers   []scripted
		call      func(context.Context, *Client) error
		wantTries int
		wantErr   error
	}{
		{
			name:      "a GET that hits a 500 is retried until it succeeds",
			answers:   []scripted{jsonAnswer(500, envelope("boom")), jsonAnswer(503, ""), ok},
			call:      func(ctx context.Context, c *Client) error { _, err := c.GetVolume(ctx, "vol1"); return err },
			wantTries: 3,
		},
		{
			name:      "a GET that hits a 409 is retried",
			answers:   []scripted{jsonAnswer(409, lockBody), ok},
			call:      func(ctx context.Context, c *Client) error { _, err := c.GetVolume(ctx, "vol1"); return err },
			wantTries: 2,
		},
		{
			name:    "a GET gives up after the attempt limit and returns the last error",
			answers: []scripted{jsonAnswer(500, envelope("heal info operation failed"))},
			call: func(ctx context.Context, c *Client) error {
				_, err := c.HealInfo(ctx, "vol1", HealInfoSummary)
				return err
			},
			wantTries: 4, wantErr: ErrBadRequest, // placeholder, replaced below
		},
		{
			name:      "a GET that gets a 404 is not retried",
			answers:   []scripted{jsonAnswer(404, envelope("volume not found"))},
			call:      func(ctx context.Context, c *Client) error { _, err := c.GetVolume(ctx, "vol1"); return err },
			wantTries: 1, wantErr: ErrNotFound,
		},
		{
			name:      "a POST that hits a 500 is not retried because it may have taken effect",
			answers:   []scripted{jsonAnswer(500, envelope("txn timeout")), ok},
			call:      func(ctx context.Context, c *Client) error { _, err := c.StartVolume(ctx, "vol1", false); return err },
			wantTries: 1, wantErr: ErrTxnTimeout,
		},
		{
			name:      "a DELETE that hits a 503 is not retried",
			answers:   []scripted{jsonAnswer(503, ""), {status: 204}},
			call:      func(ctx context.Context, c *Client) error { return c.DeleteVolume(ctx, "vol1") },
			wantTries: 1,
		},
		{
			name:      "a POST refused with a lock timeout is retried because GD2 did nothing",
			answers:   []scripted{jsonAnswer(409, lockBody), jsonAnswer(409, lockBody), ok},
			call:      func(ctx context.Context, c *Client) error { _, err := c.StopVolume(ctx, "vol1"); return err },
			wantTries: 3,
		},
		{
			name:      "a DELETE refused with a lock timeout is retried",
			answers:   []scripted{jsonAnswer(409, lockBody), {status: 204}},
			call:      func(ctx context.Context, c *Client) error { return c.DeletePeer(ctx, "p1") },
			wantTries: 2,
		},
		{
			name:    "a POST refused because the peer exists is not retried",
			answers: []scripted{jsonAnswer(409, envelope("Peer exists with given addresses (ID: p1)"))},
			call: func(ctx context.Context, c *Client) error {
				_, err := c.AddPeer(ctx, PeerAddRequest{Addresses: []string{"h"}})
				return err
			},
			wantTries: 1, wantErr: ErrAlreadyExists,
		},
		{
			name:      "a POST that keeps hitting lock timeouts gives up with ErrLockBusy",
			answers:   []scripted{jsonAnswer(409, lockBody)},
			call:      func(ctx context.Context, c *Client) error { return c.Heal(ctx, "vol1", HealIndex) },
			wantTries: 4, wantErr: ErrLockBusy,
		},
	}
	cases[2].wantErr = nil // checked by status below
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t, tc.answers...)
			c := rec.client(t)
			err := tc.call(context.Background(), c)
			if n := len(rec.seen()); n != tc.wantTries {
				t.Errorf("%d attempts, want %d", n, tc.wantTries)
			}
			last := tc.answers[min(tc.wantTries, len(tc.answers))-1]
			if last.status >= 200 && last.status < 300 {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != last.status {
				t.Fatalf("want APIError with status %d, got %v", last.status, err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("want %v, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestCancellingTheContextStopsRetries(t *testing.T) {
	var hits atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newRecorder(t, jsonAnswer(500, envelope("boom")))
	c := srv.client(t, func(o *Options) {
		o.Retry = &RetryPolicy{MaxAttempts: 100, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
		o.Observer = ObserverFunc(func(Operation, int, time.Duration) {
			if hits.Add(1) == 2 {
				cancel() // the caller gives up while the client waits to retry
			}
		})
	})
	_, err := c.ListVolumes(ctx, Filter{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 500 {
		t.Errorf("the last GD2 answer should stay visible: %v", err)
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("%d attempts after cancellation, want 2", n)
	}
}

func TestCallsWithoutDeadlineGetTheDefaultTimeout(t *testing.T) {
	release := make(chan struct{})
	rec := newRecorder(t)
	rec.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := rec.client(t, func(o *Options) { o.Timeout = 50 * time.Millisecond; o.Retry = &RetryPolicy{MaxAttempts: 1} })
	start := time.Now()
	_, err := c.AddPeer(context.Background(), PeerAddRequest{Addresses: []string{"h"}})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNoResponse) {
		t.Fatalf("want a deadline error without response, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("call took %v", d)
	}
}

func TestDialFailuresAreRetriedEvenForMutatingCalls(t *testing.T) {
	rec := newRecorder(t)
	url := rec.srv.URL
	rec.srv.Close()
	var attempts atomic.Int32
	c, err := New(Options{Endpoint: url, Retry: fastRetry,
		Observer: ObserverFunc(func(Operation, int, time.Duration) { attempts.Add(1) })})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateVolume(context.Background(), VolumeCreateRequest{Name: "v"})
	if !errors.Is(err, ErrNoResponse) {
		t.Fatalf("want ErrNoResponse, got %v", err)
	}
	if n := attempts.Load(); int(n) != fastRetry.MaxAttempts {
		t.Fatalf("%d attempts, want %d: a refused dial never reached GD2", n, fastRetry.MaxAttempts)
	}
}

func TestBackoffGrowsAndStaysCapped(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.normalised()
	for attempt := 1; attempt <= 9; attempt++ {
		step := min(p.BaseDelay<<(attempt-1), p.MaxDelay)
		for range 50 {
			d := p.delay(attempt)
			if d < step/2 || d > step {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, step/2, step)
			}
		}
	}
}
