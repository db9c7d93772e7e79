package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/objects"
)

func TestNodeArgs(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantAction string
		wantErrHas string
	}{
		{name: "maintenance", args: []string{"maintenance", "n1"}, wantAction: "maintenance"},
		{name: "decommission", args: []string{"decommission", "n1"}, wantAction: "decommission"},
		{name: "resume", args: []string{"resume", "n1"}, wantAction: "resume"},
		{name: "nothing lists the actions", args: nil, wantErrHas: "actions: decommission, maintenance, resume"},
		{name: "an unknown action lists the valid ones", args: []string{"drain", "n1"}, wantErrHas: `unknown action "drain"; valid actions: decommission, maintenance, resume`},
		{name: "a missing name", args: []string{"resume"}, wantErrHas: "missing NAME"},
		{name: "extra arguments", args: []string{"resume", "n1", "n2"}, wantErrHas: "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			action, name, err := nodeArgs(tt.args)
			if tt.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) {
					t.Fatalf("nodeArgs(%q) = %v, want an error containing %q", tt.args, err, tt.wantErrHas)
				}
				return
			}
			if err != nil || action != tt.wantAction || name != "n1" {
				t.Errorf("nodeArgs(%q) = %q, %q, %v", tt.args, action, name, err)
			}
		})
	}
}

func TestRequestNodeSetsTheAnnotationAndKeepsOthers(t *testing.T) {
	n := glusterNode("ns", "n1", "gluster")
	n.Annotations = map[string]string{"keep": "me", objects.AnnotationRequest: objects.RequestMaintenance}
	n.Status.State = "Maintenance"
	ac := anthillfake.NewSimpleClientset(n)
	var out bytes.Buffer
	if err := requestNode(context.Background(), ac, "ns", "n1", objects.RequestResume, &out); err != nil {
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
	err := requestNode(context.Background(), ac, "ns", "n1", objects.RequestMaintenance, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `GlusterNode "n1" not found in namespace ns`) {
		t.Errorf("requestNode = %v, want a not-found error naming node and namespace", err)
	}
}
