package engine

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Error classes, used as the bounded `class` metric label and to decide how
// loudly to report a failed sync.
const (
	ClassConflict  = "conflict"
	ClassTransient = "transient"
	ClassPermanent = "permanent"
)

// PermanentError marks a failure that retrying cannot fix (an unknown
// persisted state, an invalid spec the API server let through). It is
// surfaced as a condition and an Event, and retried only with backoff.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// ErrorClass classifies err for metrics and logging.
func ErrorClass(err error) string {
	var perm *PermanentError
	switch {
	case apierrors.IsConflict(err):
		return ClassConflict
	case errors.As(err, &perm):
		return ClassPermanent
	default:
		return ClassTransient
	}
}
