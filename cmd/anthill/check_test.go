package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

func TestCheckSaysWhatIsMissing(t *testing.T) {
	deployment := func(available int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "anthill-operator"},
			Status: appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: available, AvailableReplicas: available}}
	}
	crds := &metav1.APIResourceList{GroupVersion: operatorv1alpha1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
		{Name: "glusterclusters", Kind: "GlusterCluster", Namespaced: true}, {Name: "glusternodes", Kind: "GlusterNode", Namespaced: true},
	}}
	onlyClusters := &metav1.APIResourceList{GroupVersion: crds.GroupVersion, APIResources: crds.APIResources[:1]}
	for _, tc := range []struct {
		name      string
		objects   []*appsv1.Deployment
		resources []*metav1.APIResourceList
		wantErr   string
	}{
		{"an available operator with both CRDs served passes", []*appsv1.Deployment{deployment(1)}, []*metav1.APIResourceList{crds}, ""},
		{"a missing Deployment fails", nil, []*metav1.APIResourceList{crds}, "ops/anthill-operator does not exist"},
		{"a Deployment with no available replica fails", []*appsv1.Deployment{deployment(0)}, []*metav1.APIResourceList{crds}, "no available replica (0 of 2 ready)"},
		{"no CRDs fail", []*appsv1.Deployment{deployment(2)}, nil, "does not serve glusterclusters and glusternodes"},
		{"one CRD missing fails", []*appsv1.Deployment{deployment(2)}, []*metav1.APIResourceList{onlyClusters}, "does not serve glusternodes in operator.gluster.org/v1alpha1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientset()
			for _, d := range tc.objects {
				if _, err := c.AppsV1().Deployments(d.Namespace).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			c.Discovery().(*fakediscovery.FakeDiscovery).Resources = tc.resources
			var out, errOut bytes.Buffer
			err := checkCmd(context.Background(), []string{"--namespace", "ops"}, &out, &errOut, func(string) (kubernetes.Interface, error) { return c, nil })
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("check failed: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("check returned %v, want an error with %q", err, tc.wantErr)
			case tc.wantErr == "" && !strings.Contains(out.String(), "glusterclusters, glusternodes served"):
				t.Errorf("output %q", out.String())
			}
		})
	}
}
