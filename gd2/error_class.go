package gd2

import (
	"context"
	"errors"
	"net/http"
)

// ErrorClass is a small, fixed classification of a failed GD2 exchange,
// bounded so that it can label a metric (an error's text never may).
type ErrorClass string

// The classes, in the order ClassOf tests them: the first that matches
// wins, so a 409 lock timeout is lock_conflict, not refused, and a 500
// "node <id> is probably down" is node_down, not server.
const (
	// ClassNodeDown: GD2's liveness gate refused (a node a transaction
	// needs is down) or a peer delete named a dead peer.
	ClassNodeDown ErrorClass = "node_down"
	// ClassLockConflict: GD2's 409 "could not obtain lock" (another
	// transaction holds the volume, peer or device).
	ClassLockConflict ErrorClass = "lock_conflict"
	// ClassNotFound: 404, and GD2's 500s for a missing volume or device.
	ClassNotFound ErrorClass = "not_found"
	// ClassAuth: 401, the token was missing or refused.
	ClassAuth ErrorClass = "auth"
	// ClassTxnStep: a v1 transaction step failed on some node (code 2).
	ClassTxnStep ErrorClass = "txn_step"
	// ClassTimeout: no answer within the client's deadline, a gateway
	// timeout, or GD2's own transaction timeout.
	ClassTimeout ErrorClass = "timeout"
	// ClassRefused: any other 4xx, GD2 refusing the request as invalid for
	// the current state (validation, already exists, not started, a 409
	// other than a lock timeout, ...).
	ClassRefused ErrorClass = "refused"
	// ClassServer: any other 5xx.
	ClassServer ErrorClass = "server"
	// ClassTransport: no HTTP response (dial failure, reset) other than a
	// timeout.
	ClassTransport ErrorClass = "transport"
	// ClassBadResponse: a 2xx whose body could not be decoded.
	ClassBadResponse ErrorClass = "bad_response"
	// ClassCanceled: the caller canceled the call.
	ClassCanceled ErrorClass = "canceled"
	// ClassOther: anything else (a request that could not be built).
	ClassOther ErrorClass = "other"
)

// ClassOf classifies err, an error returned by a Client call or one
// attempt of it; nil has no class ("").
func ClassOf(err error) ErrorClass {
	if err == nil {
		return ""
	}
	var e *APIError
	if errors.As(err, &e) {
		switch {
		case errors.Is(e, ErrNodeDown), errors.Is(e, ErrPeerNotAlive):
			return ClassNodeDown
		case errors.Is(e, ErrLockBusy):
			return ClassLockConflict
		case errors.Is(e, ErrNotFound):
			return ClassNotFound
		case errors.Is(e, ErrUnauthorized):
			return ClassAuth
		case errors.Is(e, ErrTxnStepFailed):
			return ClassTxnStep
		case errors.Is(e, ErrTxnTimeout), e.Status == http.StatusGatewayTimeout:
			return ClassTimeout
		case e.Status >= 400 && e.Status < 500:
			return ClassRefused
		default:
			return ClassServer
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return ClassTimeout
	case errors.Is(err, ErrNoResponse):
		return ClassTransport
	case errors.Is(err, ErrBadResponse):
		return ClassBadResponse
	}
	return ClassOther
}

// isTimeout reports a network error that says it timed out.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// ErrorObserver is an optional extension of Observer: when the Observer
// also implements it, the client reports the class of every failed HTTP
// attempt (as ObserveRequest reports every attempt), so that failures per
// request are a plain ratio of the two counts.
type ErrorObserver interface {
	ObserveError(op Operation, class ErrorClass)
}
