package gd2

import "time"

// Observer receives one report per HTTP attempt (a retried call reports each
// attempt), so request-rate and latency metrics see what GD2 actually served.
// status is the HTTP status code, or 0 when no response arrived (dial failure,
// timeout, cancellation). Implementations must be safe for concurrent use and
// should return quickly: they run on the caller's goroutine.
type Observer interface {
	ObserveRequest(op Operation, status int, d time.Duration)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(op Operation, status int, d time.Duration)

// ObserveRequest calls f.
func (f ObserverFunc) ObserveRequest(op Operation, status int, d time.Duration) {
	f(op, status, d)
}

type nopObserver struct{}

func (nopObserver) ObserveRequest(Operation, int, time.Duration) {}
