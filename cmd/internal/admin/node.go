package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// nodeActions are the requests an admin can make, in the order the usage
// lists them; each is a value of the objects.AnnotationRequest annotation.
var nodeActions = []string{objects.RequestDecommission, objects.RequestMaintenance, objects.RequestResume}

// nodeActionDocs say what each request does, for its help.
var nodeActionDocs = map[string]string{
	objects.RequestDecommission: "move every brick off the node, then remove it",
	objects.RequestMaintenance:  "take the node out of failure handling and brick placement",
	objects.RequestResume:       "bring a node in maintenance back online",
}

func (r *root) nodeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node ACTION NAME",
		Short: "request decommission, maintenance or resume of a GlusterNode; list them",
		Long: "Sets the " + objects.AnnotationRequest + " annotation on the GlusterNode NAME;\n" +
			"the operator acts on it once. Actions: decommission, maintenance, resume.\n" +
			"node list [CLUSTER] lists the GlusterNodes.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.UsageError(fmt.Errorf("missing ACTION and NAME; actions: %s", strings.Join(nodeActions, ", ")))
			}
			return cli.UsageError(fmt.Errorf("unknown action %q; valid actions: %s", args[0], strings.Join(nodeActions, ", ")))
		},
		// Without this, an unknown ACTION is the Args error above rather
		// than cobra's "unknown command".
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	for _, action := range nodeActions {
		cmd.AddCommand(r.nodeActionCommand(action))
	}
	cmd.AddCommand(r.nodeListCommand())
	return cmd
}

// nodeWait is what --wait waits for after a request: the state the node
// reaches, or (decommission) the node gone.
var nodeWait = map[string]string{
	objects.RequestDecommission: string(states.NodeDeleted),
	objects.RequestMaintenance:  string(states.NodeMaintenance),
	objects.RequestResume:       string(states.NodeOnline),
}

func (r *root) nodeActionCommand(action string) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:               action + " NAME",
		Short:             nodeActionDocs[action],
		Args:              exactArgs("NAME"),
		ValidArgsFunction: r.completeNodes,
	}
	cmd.Long = fmt.Sprintf("Sets %s=%s on the GlusterNode NAME: %s.\n"+
		"With --wait, waits until the node is %s; when --timeout runs out first the exit code is 124.",
		objects.AnnotationRequest, action, nodeActionDocs[action], waitText(action))
	if action == objects.RequestDecommission {
		cmd.Long += "\n\nBefore asking, prints the plan: the node's bricks and where the operator's own\n" +
			"placement policy would move each of them now. Asks for confirmation on the\n" +
			"terminal unless --yes; any answer but y or yes changes nothing."
		cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	}
	waiting := addWaitFlags(cmd, "the node is "+waitText(action))
	output := outputFlag(cmd, outputJSON, outputYAML, outputName, outputJSONPath)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := waiting.check(); err != nil {
			return err
		}
		ctx, name := cmd.Context(), args[0]
		kc, ac, ns, err := r.kube.clients()
		if err != nil {
			return err
		}
		// With -o json|yaml stdout is the node alone; the plan and the
		// messages go to stderr.
		var text io.Writer = r.out()
		if machineReadable(*output) {
			text = r.streams.ErrOut
		}
		if action == objects.RequestDecommission {
			if err := showDecommissionPlan(ctx, kc, ac, ns, name, text); err != nil {
				return err
			}
			if !yes {
				ok, err := confirm(ctx, r.streams.In, r.streams.ErrOut, fmt.Sprintf("Decommission GlusterNode %s/%s?", ns, name))
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("not confirmed; nothing changed")
				}
			}
		}
		node, err := requestNode(ctx, ac, ns, name, action, r.name, text)
		if err != nil {
			return err
		}
		if waiting.wait {
			if node, err = waitForNode(ctx, ac, ns, name, action, waiting.timeout, text); err != nil {
				return err
			}
		}
		if machineReadable(*output) && node != nil {
			node.APIVersion, node.Kind = operatorv1alpha1.SchemeGroupVersion.String(), kindGlusterNode
			return printData(r.out(), *output, node, objectRef{node.APIVersion, node.Kind, node.Name})
		}
		return nil
	}
	return cmd
}

func waitText(action string) string {
	if action == objects.RequestDecommission {
		return "removed"
	}
	return nodeWait[action]
}

// confirm asks question on w and reads the answer from in: only y or yes
// (any case) is a yes; an end of input is a no.
func confirm(ctx context.Context, in io.Reader, w io.Writer, question string) (bool, error) {
	return newPrompter(in, w).confirm(ctx, question)
}

// waitForNode polls GlusterNode ns/name until it reaches the state action
// leads to (decommission: until it is gone), for at most timeout; running
// out is exit code 124. It returns the node as last read (nil when gone).
func waitForNode(ctx context.Context, ac versioned.Interface, ns, name, action string, timeout time.Duration, w io.Writer) (*operatorv1alpha1.GlusterNode, error) {
	target := nodeWait[action]
	var last *operatorv1alpha1.GlusterNode
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := ac.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			last = nil
			return action == objects.RequestDecommission, nil
		case err != nil:
			// A passing API server hiccup is not the end of a long wait.
			return false, nil
		}
		last = n
		return n.Status.State == target, nil
	})
	if err == nil {
		fmt.Fprintf(w, "GlusterNode %s/%s is %s\n", ns, name, waitText(action))
		return last, nil
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return last, ctx.Err()
	}
	now := "gone"
	if last != nil {
		now = orDash(last.Status.State)
	}
	return last, &cli.ExitError{Code: cli.ExitTimeout, Err: fmt.Errorf("timed out after %s waiting for GlusterNode %s/%s to be %s (now %s)", timeout, ns, name, waitText(action), now)}
}

// requestPatch is the merge patch that sets the request annotation to
// action and leaves every other annotation alone.
func requestPatch(action string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{objects.AnnotationRequest: action}},
	})
}

// requestNode sets the request annotation of GlusterNode ns/name to action
// and tells w what it did.
// prog is how the user runs this program, for the command it suggests. It
// returns the node as patched.
func requestNode(ctx context.Context, ac versioned.Interface, ns, name, action, prog string, w io.Writer) (*operatorv1alpha1.GlusterNode, error) {
	nodes := ac.OperatorV1alpha1().GlusterNodes(ns)
	// Read first so the message can say what the request replaces and the
	// state it starts from; the patch itself needs no resourceVersion
	// because it touches only this one annotation.
	before, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("GlusterNode %q not found in namespace %s (list them with: kubectl get glusternodes -n %s)", name, ns, ns)
		}
		return nil, fmt.Errorf("get GlusterNode %s/%s: %w", ns, name, err)
	}
	patch, err := requestPatch(action)
	if err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	after, err := nodes.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("GlusterNode %q in namespace %s was deleted before the request was set", name, ns)
		}
		return nil, fmt.Errorf("annotate GlusterNode %s/%s: %w", ns, name, err)
	}
	state := before.Status.State
	if state == "" {
		state = "not yet reported"
	}
	fmt.Fprintf(w, "GlusterNode %s/%s: requested %s (annotation %s=%s; state %s)\n", ns, name, action, objects.AnnotationRequest, action, state)
	if prev := before.Annotations[objects.AnnotationRequest]; prev != "" && prev != action {
		fmt.Fprintf(w, "note: this replaces the previous request %q\n", prev)
	}
	if before.DeletionTimestamp != nil {
		fmt.Fprintf(w, "note: the node is being deleted; the operator is already draining it\n")
	}
	fmt.Fprintf(w, "watch with: %s transitions -f -n %s\n", prog, ns)
	return after, nil
}
