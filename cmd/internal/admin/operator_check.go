package admin

import (
	"context"
	"time"

	"github.com/spf13/cobra"
)

// flagOperatorNamespace is the persistent flag naming the operator's
// namespace.
const flagOperatorNamespace = "operator-namespace"

// checksOperator reports whether c reports on what the operator acts on,
// so that it checks the operator first: every command but the ones that
// read nothing of a cluster (diagram, completion, help) and version, which
// reports the operator itself.
func checksOperator(c *cobra.Command) bool {
	for p := c; p != nil; p = p.Parent() {
		switch p.Name() {
		case "version", "diagram", "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return false
		}
	}
	return c.HasParent()
}

// readOperatorHealth reads the operator through the connection flags. It
// fails when there is no cluster to ask or a read failed for a reason
// other than rights (lacking those leaves the health unknown).
func (r *root) readOperatorHealth(ctx context.Context) (operatorHealth, error) {
	kc, _, _, err := r.kube.clients()
	if err != nil {
		return operatorHealth{}, err
	}
	return readOperator(ctx, kc, r.operatorNamespace, !r.operatorNamespaceSet)
}

// warnIfOperatorStopped says on stderr, before the command reports, that
// nothing acts on what it shows when the operator is not running.
func (r *root) warnIfOperatorStopped(ctx context.Context) {
	h, err := r.readOperatorHealth(ctx)
	if err != nil {
		return
	}
	h.warnIfStopped(r.streams.ErrOut, time.Now())
}
