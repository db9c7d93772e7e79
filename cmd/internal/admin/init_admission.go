package admin

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// clusterCreator creates a GlusterCluster from its JSON object, only
// checking it when dryRun.
type clusterCreator interface {
	createCluster(ctx context.Context, ns string, obj map[string]any, dryRun bool) error
}

// dynamicCreator sends the object as typed to the API server, so the
// CRD's schema and rules judge the answers themselves.
type dynamicCreator struct{ dyn dynamic.Interface }

func (d dynamicCreator) createCluster(ctx context.Context, ns string, obj map[string]any, dryRun bool) error {
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err := d.dyn.Resource(glusterClusters).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: obj}, opts)
	return err
}

// rulesNotChecked is in the message of the cause the API server adds when
// it skipped CEL rules because of the object's other errors.
const rulesNotChecked = "validation rules were not checked"

// problem is one thing admission rejected.
type problem struct {
	// question is the key of the question whose answer set the field;
	// empty when none did.
	question string
	// text is the field and admission's message, as kubectl prints it.
	text string
}

// problemsOf splits admission's verdict into its problems. ok is false
// when err is no verdict on the object (the API server unreachable,
// unauthorized, failing).
func problemsOf(err error) (_ []problem, ok bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return nil, false
	}
	st := status.Status()
	if st.Code < 400 || st.Code >= 500 || st.Code == 401 {
		return nil, false
	}
	var out []problem
	// One answer sets the same field in every node template; its
	// problem is said once, for the first template.
	said := map[string]bool{}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if strings.Contains(c.Message, rulesNotChecked) {
				// Says only that the other causes come first.
				continue
			}
			text := c.Message
			if c.Field != "" {
				text = c.Field + ": " + c.Message
			}
			if key := listIndex.ReplaceAllString(text, "[]"); !said[key] {
				said[key] = true
				out = append(out, problem{question: questionFor(c.Field), text: text})
			}
		}
	}
	if len(out) > 0 {
		return out, true
	}
	p := problem{text: st.Message}
	switch {
	case apierrors.IsAlreadyExists(err):
		p.question = qName
	case apierrors.IsNotFound(err) && st.Details != nil && st.Details.Kind == "namespaces":
		p.question = qNamespace
	}
	return []problem{p}, true
}
