package effects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// nodeNameSuffixLen is the length of the random suffix of a GlusterNode
// name made by ScaleNodes.
const nodeNameSuffixLen = 5

// createAttempts bounds the retries of a GlusterNode create whose random
// name collided with an existing node.
const createAttempts = 3

func (o *Kube) suffix() string {
	if o.NameSuffix == nil {
		return utilrand.String(nodeNameSuffixLen)
	}
	// createNodes draws names concurrently; an injected source need not
	// be safe for that.
	suffixMu.Lock()
	defer suffixMu.Unlock()
	return o.NameSuffix()
}

var suffixMu sync.Mutex

// createParallelism bounds the GlusterNodes ScaleNodes creates at once.
const createParallelism = 8

// ScaleNodes carries out the plan ct.Scale: the cluster machine made it
// (objects.ScalePlanOf over states.PlanScale, from the live cluster and
// its live GlusterNodes, with the brick counts of its sync) and put it on
// record before this runs. states.PlanScale decides which templates gain
// nodes (in manual mode to nodeTemplates[].nodes; in automatic mode to
// the counts the autoscaler recorded in status.autoscaling, within
// minNodes..maxNodes) and which nodes are asked to leave (a template's
// surplus, the one whose removal moves the least data first; never a node
// whose template is no longer in the spec, or a node added by hand).
//
// Scale-down sets the decommission request on the nodes the plan names;
// scale-up creates one GlusterNode per entry of the plan, from the
// template of that name in the live cluster's spec.
func (o *Kube) ScaleNodes(ctx context.Context, ct transitions.ClusterTarget, desired int) error {
	if ct.Scale == nil {
		return nil
	}
	for _, n := range ct.Scale.Decommission {
		if err := o.requestDecommission(ctx, ct.Namespace, n.Name); err != nil {
			return err
		}
	}
	if len(ct.Scale.Create) == 0 {
		return nil
	}
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	if c.Spec.Mode == operatorv1alpha1.ClusterModeExternal {
		return nil
	}
	templates, err := templatesNamed(c, ct.Scale.Create)
	if err != nil {
		return err
	}
	return o.createNodes(ctx, c, templates)
}

// templatesNamed are c's node templates of names, one entry per name.
func templatesNamed(c *operatorv1alpha1.GlusterCluster, names []string) ([]*operatorv1alpha1.NodeTemplate, error) {
	out := make([]*operatorv1alpha1.NodeTemplate, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(c.Spec.NodeTemplates, func(t operatorv1alpha1.NodeTemplate) bool { return t.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("scale %s/%s: node template %q is no longer in the spec", c.Namespace, c.Name, name)
		}
		out = append(out, &c.Spec.NodeTemplates[i])
	}
	return out, nil
}

// createNodes creates one GlusterNode per entry of templates, up to
// createParallelism at a time: a new cluster's nodes then start
// provisioning together instead of one API round trip apart. Every create
// is attempted; the errors are joined.
func (o *Kube) createNodes(ctx context.Context, c *operatorv1alpha1.GlusterCluster, templates []*operatorv1alpha1.NodeTemplate) error {
	sem := make(chan struct{}, createParallelism)
	errs := make([]error, len(templates))
	var wg sync.WaitGroup
	for i, t := range templates {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = o.createNode(ctx, c, t)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// clusterNodes lists the GlusterNodes whose spec.cluster is cluster. It
// filters on the spec, not a label, so that nodes added by hand count too.
func (o *Kube) clusterNodes(ctx context.Context, namespace, cluster string) ([]*operatorv1alpha1.GlusterNode, error) {
	list, err := o.Anthill.OperatorV1alpha1().GlusterNodes(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list GlusterNodes in %s: %w", namespace, err)
	}
	var out []*operatorv1alpha1.GlusterNode
	for i := range list.Items {
		if list.Items[i].Spec.Cluster == cluster {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

func (o *Kube) createNode(ctx context.Context, c *operatorv1alpha1.GlusterCluster, t *operatorv1alpha1.NodeTemplate) error {
	nodes := o.Anthill.OperatorV1alpha1().GlusterNodes(c.Namespace)
	var err error
	for range createAttempts {
		n := objects.NodeFromTemplate(c, t, o.suffix())
		if objects.TLSEnabled(c) {
			if err := o.tls().issueNode(ctx, c, n); err != nil {
				return err
			}
		}
		_, err = nodes.Create(ctx, n, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			break
		}
		// A random name collided: draw another.
	}
	if err != nil {
		return fmt.Errorf("create GlusterNode for template %q of %s/%s: %w", t.Name, c.Namespace, c.Name, err)
	}
	return nil
}

// requestDecommission sets the decommission request with a merge patch, so
// it neither races other writers of the object nor needs a resourceVersion.
func (o *Kube) requestDecommission(ctx context.Context, namespace, name string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{objects.AnnotationRequest: objects.RequestDecommission}},
	})
	if err != nil {
		return fmt.Errorf("encode decommission request: %w", err)
	}
	_, err = o.Anthill.OperatorV1alpha1().GlusterNodes(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("request decommission of GlusterNode %s/%s: %w", namespace, name, err)
	}
	return nil
}

// DeleteNodes deletes the cluster's GlusterNodes one at a time; each node's
// finalizer keeps it until its machine has drained and removed it, and the
// next is deleted only when it is gone. One at a time because a node leaves
// the management Service to have its peer deleted: were every node deleted
// at once, no GD2 member would be left to serve the requests.
//
// The last node cannot have its peer deleted (GD2 refuses to remove its only
// peer); its own machine sees that the cluster is going and removes it with
// the pool (Detaching -> Deleting, reason LastPeer). Nodes go in scale-down
// order (states.ScaleDownOrder, by ct.Bricks).
func (o *Kube) DeleteNodes(ctx context.Context, ct transitions.ClusterTarget) error {
	nodes, err := o.clusterNodes(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	var leaving, rest []*operatorv1alpha1.GlusterNode
	for _, n := range nodes {
		if n.DeletionTimestamp != nil {
			leaving = append(leaving, n)
		} else {
			rest = append(rest, n)
		}
	}
	if len(leaving) > 0 || len(rest) == 0 {
		return nil // a node is still leaving; its removal requeues the cluster
	}
	n := objects.ScaleDownOrder(rest, ct.Bricks)[0]
	err = o.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Delete(ctx, n.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &n.UID},
	})
	if err := ignoreNotFound(err); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete GlusterNode %s/%s: %w", n.Namespace, n.Name, err)
	}
	return nil
}
