package admin

import (
	"bytes"
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/objects"
)

func TestRequestNodeSetsTheAnnotationAndKeepsOthers(t *testing.T) {
	n := glusterNode("ns", "n1", "gluster")
	n.Annotations = map[string]string{"keep": "me", objects.AnnotationRequest: objects.RequestMaintenance}
	n.Status.State = "Maintenance"
	ac := anthillfake.NewSimpleClientset(n)
	var out bytes.Buffer
	if _, err := requestNode(context.Background(), ac, "ns", "n1", objects.RequestResume, "anthill", &out); err != nil {
		t.Fatalf("requestNode: %v", err)
	}
	got, err := ac.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations[objects.AnnotationRequest] != objects.RequestResume || got.Annotations["keep"] != "me" {
		t.Errorf("annotations = %v, want the request set to resume and keep=me kept", got.Annotations)
	}
	want := "GlusterNode ns/n1: requested resume (annotation operator.gluster.org/request=resume; state Maintenance)\n" +
		"note: this replaces the previous request \"maintenance\"\n" +
		"watch with: anthill transitions -f -n ns\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	var patches int
	for _, a := range ac.Actions() {
		if a.GetVerb() == "patch" {
			patches++
		}
	}
	if patches != 1 {
		t.Errorf("%d patches, want exactly one", patches)
	}
}

func TestRequestNodeNamesAMissingNode(t *testing.T) {
	ac := anthillfake.NewSimpleClientset(glusterNode("other", "n1", "gluster"))
	_, err := requestNode(context.Background(), ac, "ns", "n1", objects.RequestMaintenance, "anthill", &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `GlusterNode "n1" not found in namespace ns`) {
		t.Errorf("requestNode = %v, want a not-found error naming node and namespace", err)
	}
}
