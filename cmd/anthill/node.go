package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
)

func init() {
	commands.Register("node", cli.Command{
		Summary: "request decommission, maintenance or resume of a GlusterNode",
		Run:     runNode,
	})
}

// nodeActions are the requests an admin can make, in the order the usage
// lists them; each is a value of the objects.AnnotationRequest annotation.
var nodeActions = []string{objects.RequestDecommission, objects.RequestMaintenance, objects.RequestResume}

func runNode(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	var kf kubeFlags
	kf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: anthill node ACTION NAME [-n NAMESPACE]\n\n"+
			"Sets the %s annotation on the GlusterNode NAME; the operator acts on it once.\n"+
			"actions:\n"+
			"  decommission  move every brick off the node, then remove it\n"+
			"  maintenance   take the node out of failure handling and brick placement\n"+
			"  resume        bring a node in maintenance back online\n\nflags:\n", objects.AnnotationRequest)
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	action, name, err := nodeArgs(rest)
	if err != nil {
		return err
	}
	_, ac, ns, err := kf.clients()
	if err != nil {
		return err
	}
	return requestNode(ctx, ac, ns, name, action, os.Stdout)
}

// nodeArgs checks the positional arguments ACTION NAME.
func nodeArgs(args []string) (action, name string, err error) {
	valid := strings.Join(nodeActions, ", ")
	switch {
	case len(args) == 0:
		return "", "", fmt.Errorf("missing ACTION and NAME; usage: anthill node ACTION NAME; actions: %s", valid)
	case !slices.Contains(nodeActions, args[0]):
		return "", "", fmt.Errorf("unknown action %q; valid actions: %s", args[0], valid)
	case len(args) == 1:
		return "", "", fmt.Errorf("missing NAME: which GlusterNode to %s? (list them with: kubectl get glusternodes)", args[0])
	case len(args) > 2:
		return "", "", fmt.Errorf("unexpected arguments %q after NAME %q", args[2:], args[1])
	}
	return args[0], args[1], nil
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
func requestNode(ctx context.Context, ac versioned.Interface, ns, name, action string, w io.Writer) error {
	nodes := ac.OperatorV1alpha1().GlusterNodes(ns)
	// Read first so the message can say what the request replaces and the
	// state it starts from; the patch itself needs no resourceVersion
	// because it touches only this one annotation.
	before, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("GlusterNode %q not found in namespace %s (list them with: kubectl get glusternodes -n %s)", name, ns, ns)
		}
		return fmt.Errorf("get GlusterNode %s/%s: %w", ns, name, err)
	}
	patch, err := requestPatch(action)
	if err != nil {
		return fmt.Errorf("encode patch: %w", err)
	}
	if _, err := nodes.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("GlusterNode %q in namespace %s was deleted before the request was set", name, ns)
		}
		return fmt.Errorf("annotate GlusterNode %s/%s: %w", ns, name, err)
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
	fmt.Fprintf(w, "watch with: anthill transitions -f -n %s\n", ns)
	return nil
}
