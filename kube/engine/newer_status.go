package engine

import (
	"fmt"
	"time"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// newerStatusRetry is how often an object whose status a newer operator
// wrote is looked at again (any change to it is delivered sooner).
const newerStatusRetry = time.Minute

// newerStatus says why o is refused when its status was written at a
// status schema level above this operator's: writing it would drop the
// fields this operator does not know, so nothing is done to the object at
// all, not even a condition (that is a status write too). The Warning
// Event is the only trace.
func newerStatus(o Object) (string, bool) {
	s, ok := o.(interface{ GetStatusSchema() int32 })
	if !ok {
		return "", false
	}
	level := s.GetStatusSchema()
	if level <= operatorv1alpha1.StatusSchemaLevel {
		return "", false
	}
	return fmt.Sprintf("status.statusSchema is %d, above this operator's %d: an operator newer than this one wrote it. "+
		"Refusing to act on the object or write its status, which would drop what this operator does not know; run that newer operator again.",
		level, operatorv1alpha1.StatusSchemaLevel), true
}
