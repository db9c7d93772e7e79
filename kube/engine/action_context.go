package engine

import (
	"context"

	"go.uber.org/zap"
)

// ActionContext says on whose behalf an action runs: the machine instance,
// the state it is in, the event or step being acted on and the decision's
// reason. The runner puts it in the context of every action, so the
// effects that change configuration log each call with why it was made
// (see effects.Audit) without every action passing it along.
type ActionContext struct {
	Machine   string
	Namespace string
	Name      string
	Subject   string
	// State is the state the instance is in; Action the event or step.
	State  string
	Action string
	// Target is the event's target state; "" for a step.
	Target string
	Reason string
}

type actionContextKey struct{}

// WithAction returns ctx carrying ac.
func WithAction(ctx context.Context, ac ActionContext) context.Context {
	return context.WithValue(ctx, actionContextKey{}, ac)
}

// ActionFrom returns the ActionContext of ctx, if any.
func ActionFrom(ctx context.Context) (ActionContext, bool) {
	ac, ok := ctx.Value(actionContextKey{}).(ActionContext)
	return ac, ok
}

// Fields are ac as log fields.
func (ac ActionContext) Fields() []zap.Field {
	f := []zap.Field{
		zap.String(LogMachine, ac.Machine), zap.String(LogNamespace, ac.Namespace), zap.String(LogName, ac.Name),
		zap.String(LogState, ac.State), zap.String(LogStep, ac.Action), zap.String(LogReason, ac.Reason),
	}
	if ac.Subject != "" {
		f = append(f, zap.String(LogSubject, ac.Subject))
	}
	if ac.Target != "" {
		f = append(f, zap.String(LogTo, ac.Target))
	}
	return f
}
