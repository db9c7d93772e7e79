//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gluster/anthill/e2e/framework"
)

// TestOperatorRunsAsItsServiceAccount: every e2e test runs the operator
// under the shipped RBAC, not as an administrator. This proves that the
// identity is in force: the API server sees the service account, denies
// what manifests/rbac does not grant, and the operator holds its
// leader-election Lease through the Role. (TestMain fails the run when the
// operator logged any denied request.)
func TestOperatorRunsAsItsServiceAccount(t *testing.T) {
	sideBySide(t)
	ctx := context.Background()
	leaseInOperatorNamespace(t)
	newNamespace(t)
	rc, err := clientcmd.BuildConfigFromFlags("", operatorOf(t).Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	review, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "system:serviceaccount:" + framework.OperatorNamespace + ":" + framework.OperatorServiceAccount
	if got := review.Status.UserInfo.Username; got != want {
		t.Fatalf("the operator's requests are made as %q, want %q", got, want)
	}
	if _, err := c.CoreV1().ConfigMaps("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing ConfigMaps, which manifests/rbac does not grant: err %v, want forbidden", err)
	}
	// This test's operator keeps its Lease where the Deployment's does,
	// in the operator's namespace under the shipped Role (the others keep
	// theirs in their own namespaces).
	err = framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		lease, err := env.Client.CoordinationV1().Leases(framework.OperatorNamespace).Get(ctx, "anthill-operator", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if h := lease.Spec.HolderIdentity; h == nil || *h != operatorIdentity(t.Name()) {
			return false, fmt.Errorf("Lease held by %v, want the operator under test", h)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the leader-election Lease: %v", err)
	}
}
