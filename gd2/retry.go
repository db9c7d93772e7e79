package gd2

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// RetryPolicy bounds the client's own retries. Which failures are retried is
// fixed (see retryable); the policy only says how often and how patiently.
type RetryPolicy struct {
	MaxAttempts int           // total attempts including the first; < 1 means 1
	BaseDelay   time.Duration // delay before the second attempt, doubled each time
	MaxDelay    time.Duration // cap for one delay
}

// DefaultRetryPolicy suits an operator's reconcile loop: a few quick tries,
// then give the decision back to the caller's requeue.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, BaseDelay: 250 * time.Millisecond, MaxDelay: 4 * time.Second}

func (p RetryPolicy) normalised() RetryPolicy {
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Millisecond
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	return p
}

// delay is capped exponential backoff with "equal jitter": half the step
// fixed, half random, so concurrent callers spread out but never retry at
// once.
func (p RetryPolicy) delay(attempt int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	return half + rand.N(half+1)
}

// wait sleeps before the next attempt or returns the context's error.
func (p RetryPolicy) wait(ctx context.Context, attempt int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(p.delay(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryable decides whether err may be retried for method. Safe cases only:
//   - a 409 lock timeout, for any method: GD2 refused before doing anything;
//   - for GET (idempotent): any 5xx, any 409, any failure without a response;
//   - for any method: a dial failure, since the request never left.
//
// A mutating call that timed out or got a 5xx may have taken effect, so it
// is never repeated blindly; the caller re-reads state and decides.
func retryable(method string, err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if errors.Is(apiErr, ErrLockBusy) {
			return true
		}
		return method == http.MethodGet && (apiErr.Status >= 500 || apiErr.Status == http.StatusConflict)
	}
	var nr *noResponseError
	if !errors.As(err, &nr) {
		return false // encoding, signing or decoding: repeating cannot help
	}
	if method == http.MethodGet {
		return true
	}
	var opErr *net.OpError
	return errors.As(nr.err, &opErr) && opErr.Op == "dial"
}
