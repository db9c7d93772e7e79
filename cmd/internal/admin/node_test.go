package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
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

func TestNodeListIsATableOrKubectlsData(t *testing.T) {
	now := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	a := glusterNode("ns", "gluster-zone-1-a", "gluster")
	a.CreationTimestamp = metav1.NewTime(now.Add(-3 * time.Hour))
	a.Status = operatorv1alpha1.GlusterNodeStatus{State: "Online", PeerID: "p-1", Version: "4.1.0", Address: "10.0.0.1"}
	b := glusterNode("ns", "gluster-zone-2-b", "gluster")
	b.Spec.Zone = "zone-2"
	b.CreationTimestamp = metav1.NewTime(now.Add(-90 * time.Second))
	b.Annotations = map[string]string{objects.AnnotationRequest: objects.RequestMaintenance}
	other := glusterNode("ns", "other-zone-1-c", "other")
	other.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	ac := anthillfake.NewSimpleClientset(b, other, a)
	tests := []struct{ cluster, format, want string }{
		{"gluster", "", "" +
			"NAME              CLUSTER  ZONE    STATE   PEER  AGE\n" +
			"gluster-zone-1-a  gluster  zone-1  Online  p-1   3h\n" +
			"gluster-zone-2-b  gluster  zone-2  -       -     90s\n"},
		{"gluster", "wide", "" +
			"NAME              CLUSTER  ZONE    STATE   PEER  AGE  VERSION  ADDRESS   REQUEST\n" +
			"gluster-zone-1-a  gluster  zone-1  Online  p-1   3h   4.1.0    10.0.0.1  -\n" +
			"gluster-zone-2-b  gluster  zone-2  -       -     90s  -        -         maintenance\n"},
		{"", "name", "" +
			"glusternode.operator.gluster.org/gluster-zone-1-a\n" +
			"glusternode.operator.gluster.org/gluster-zone-2-b\n" +
			"glusternode.operator.gluster.org/other-zone-1-c\n"},
		{"gluster", `jsonpath={range .items[*]}{.metadata.name}={.status.state}{"\n"}{end}`, "gluster-zone-1-a=Online\ngluster-zone-2-b=\n"},
		{"none", "", "No GlusterNodes in GlusterCluster ns/none.\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := listNodes(context.Background(), ac, "ns", tt.cluster, tt.format, &out, now); err != nil {
			t.Fatalf("%s -o %s: %v", tt.cluster, tt.format, err)
		}
		if out.String() != tt.want {
			t.Errorf("node list %s -o %s:\n%s\nwant\n%s", tt.cluster, tt.format, out.String(), tt.want)
		}
	}
	var out bytes.Buffer
	if err := listNodes(context.Background(), ac, "ns", "gluster", "json", &out, now); err != nil {
		t.Fatal(err)
	}
	var l struct {
		Kind  string
		Items []operatorv1alpha1.GlusterNode
	}
	if err := json.Unmarshal(out.Bytes(), &l); err != nil || l.Kind != "List" || len(l.Items) != 2 || l.Items[0].Kind != "GlusterNode" {
		t.Errorf("node list -o json = %v, %s", err, out.String())
	}
}
