package admin

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// operatorDeployment is the shipped operator Deployment (manifests/operator)
// in ns with replicas and ready replicas.
func operatorDeployment(ns string, replicas, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anthill-operator", Labels: map[string]string{"app.kubernetes.io/name": "anthill", "app.kubernetes.io/component": "operator"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "operator", Image: "quay.io/gluster/anthill:v0.3.0",
			Args: []string{"--leader-elect=true", "--leader-election-namespace=$(POD_NAMESPACE)", "--metrics-address=:8080"},
		}}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: ready},
	}
}

func operatorLease(ns string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anthill-operator"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("anthill-operator-abc"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: renewed},
		},
	}
}

func TestOperatorHealthSaysWhyNothingActs(t *testing.T) {
	now := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		objects []runtime.Object
		ns      string
		any     bool
		// want is the warning line's text between "not running: " and
		// " —"; empty: no warning.
		want string
	}{
		{
			name:    "two ready replicas and a Lease renewed 3s ago: running",
			objects: []runtime.Object{operatorDeployment("anthill-system", 2, 2), operatorLease("anthill-system", now.Add(-3*time.Second))},
			ns:      "anthill-system",
		},
		{
			name:    "no ready replica and a Lease last renewed 5m ago",
			objects: []runtime.Object{operatorDeployment("anthill-system", 1, 0), operatorLease("anthill-system", now.Add(-5*time.Minute))},
			ns:      "anthill-system",
			want:    "0 of 1 replicas ready (Deployment anthill-system/anthill-operator); Lease anthill-system/anthill-operator last renewed 5m0s ago by anthill-operator-abc (it holds for 15s)",
		},
		{
			name:    "scaled to 0",
			objects: []runtime.Object{operatorDeployment("anthill-system", 0, 0), operatorLease("anthill-system", now.Add(-time.Hour))},
			ns:      "anthill-system",
			want:    "Deployment anthill-system/anthill-operator is scaled to 0; Lease anthill-system/anthill-operator last renewed 1h0m0s ago by anthill-operator-abc (it holds for 15s)",
		},
		{
			name:    "ready replicas but a Lease nobody renews: a hung leader",
			objects: []runtime.Object{operatorDeployment("anthill-system", 2, 2), operatorLease("anthill-system", now.Add(-20*time.Second))},
			ns:      "anthill-system",
			want:    "Lease anthill-system/anthill-operator last renewed 20s ago by anthill-operator-abc (it holds for 15s)",
		},
		{
			name:    "ready replicas and no Lease yet",
			objects: []runtime.Object{operatorDeployment("anthill-system", 1, 1)},
			ns:      "anthill-system",
			want:    "no Lease anthill-system/anthill-operator: no replica has led",
		},
		{
			name: "no Deployment",
			ns:   "anthill-system", any: true,
			want: "no operator Deployment (labels app.kubernetes.io/name=anthill,app.kubernetes.io/component=operator) in namespace anthill-system; --operator-namespace names another",
		},
		{
			name:    "no Deployment but a fresh Lease: an operator run outside the cluster",
			objects: []runtime.Object{operatorLease("anthill-system", now.Add(-time.Second))},
			ns:      "anthill-system", any: true,
		},
		{
			name:    "no Deployment and a stale Lease",
			objects: []runtime.Object{operatorLease("anthill-system", now.Add(-2*time.Minute))},
			ns:      "anthill-system", any: true,
			want: "no operator Deployment (labels app.kubernetes.io/name=anthill,app.kubernetes.io/component=operator) in namespace anthill-system; --operator-namespace names another; Lease anthill-system/anthill-operator last renewed 2m0s ago by anthill-operator-abc (it holds for 15s)",
		},
		{
			name:    "installed in another namespace (a chart release) and found there",
			objects: []runtime.Object{operatorDeployment("storage", 1, 0), operatorLease("storage", now.Add(-time.Minute))},
			ns:      "anthill-system", any: true,
			want: "0 of 1 replicas ready (Deployment storage/anthill-operator); Lease storage/anthill-operator last renewed 1m0s ago by anthill-operator-abc (it holds for 15s)",
		},
		{
			name:    "--operator-namespace given: no looking elsewhere",
			objects: []runtime.Object{operatorDeployment("storage", 1, 1)},
			ns:      "anthill-system",
			want:    "no operator Deployment (labels app.kubernetes.io/name=anthill,app.kubernetes.io/component=operator) in namespace anthill-system; --operator-namespace names another",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := readOperator(context.Background(), kubefake.NewClientset(tt.objects...), tt.ns, tt.any)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			h.warnIfStopped(&b, now)
			want := ""
			if tt.want != "" {
				want = "warning: the anthill operator is not running: " + tt.want + " — nothing below will change until it runs\n"
			}
			if b.String() != want {
				t.Errorf("warning\n%q\nwant\n%q", b.String(), want)
			}
			summary := h.summary(now)
			if h.found() && (tt.want == "") != strings.HasPrefix(summary, "v0.3.0 (image quay.io/gluster/anthill:v0.3.0;") {
				t.Errorf("summary %q: a version only when running", summary)
			}
			if !h.found() && tt.want == "" && summary != "running outside a Deployment: Lease anthill-system/anthill-operator held by anthill-operator-abc, renewed 1s ago (such a run publishes no version)" {
				t.Errorf("summary %q of an operator run outside the cluster", summary)
			}
		})
	}
}

func TestOperatorHealthWithoutTheRightToLookIsUnknownNotStopped(t *testing.T) {
	kc := kubefake.NewClientset()
	kc.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("denied"))
	})
	h, err := readOperator(context.Background(), kc, "anthill-system", true)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	h.warnIfStopped(&b, time.Now())
	if !strings.HasPrefix(b.String(), "note: cannot check whether the anthill operator runs: cannot list Deployments in namespace anthill-system") || strings.Contains(b.String(), "warning") {
		t.Errorf("got %q, want a note that it cannot be checked", b.String())
	}
	if len(h.stoppedBecause(time.Now())) != 0 {
		t.Error("an operator that cannot be checked is not reported stopped")
	}
}

func TestOperatorArgsParseAsTheOperatorsFlags(t *testing.T) {
	got := operatorArgs([]string{"--leader-elect", "-leader-election-name", "mine", "--leader-election-namespace=ops", "--leader-election-lease-duration=30s", "operator"})
	want := map[string]string{"leader-elect": "true", "leader-election-name": "mine", "leader-election-namespace": "ops", "leader-election-lease-duration": "30s"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	d := operatorDeployment("ops", 1, 1)
	d.Spec.Template.Spec.Containers[0].Args = []string{"--leader-elect", "--leader-election-name", "mine", "--leader-election-lease-duration", "30s"}
	var h operatorHealth
	h.fromDeployment(d)
	if !h.LeaderElect || h.LeaseName != "mine" || h.LeaseNamespace != defaultOperatorNamespace || h.LeaseDuration != 30*time.Second {
		t.Errorf("health from the Deployment = %+v", h)
	}
	d.Spec.Template.Spec.Containers[0].Args = nil
	d.Spec.Template.Spec.Containers[0].Image = "quay.io/gluster/anthill@sha256:00"
	d.Labels[labelAppVersion] = "v0.3.1"
	h = operatorHealth{}
	h.fromDeployment(d)
	if h.LeaderElect || h.Version != "v0.3.1" {
		t.Errorf("without --leader-elect and a tag: %+v, want no Lease and the version label", h)
	}
}
