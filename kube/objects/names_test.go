package objects

import (
	"regexp"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

func TestBuildNodeAddress(t *testing.T) {
	tests := []struct {
		name string
		node *operatorv1alpha1.GlusterNode
		want string
	}{
		{
			name: "a pod-backed node is reached at its pod's name in the headless Service on the peer port",
			node: fixtures.Node("gc", "gc-z1-abcde", nil),
			want: "gc-z1-abcde-0.gc-nodes.storage.svc:24008",
		},
		{
			name: "an external node is reached at its external address",
			node: func() *operatorv1alpha1.GlusterNode {
				n := fixtures.Node("gc", "ext", nil)
				n.Spec.ExternalAddress = "10.0.0.7"
				return n
			}(),
			want: "10.0.0.7",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NodeAddress(tt.node); got != tt.want {
				t.Errorf("NodeAddress = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBuildNodeDevicePaths(t *testing.T) {
	tests := []struct {
		name    string
		storage *operatorv1alpha1.NodeStorage
		want    []string
	}{
		{name: "no storage means one default device", storage: nil, want: []string{"/dev/anthill/brick-0"}},
		{name: "claims without a count mean one device", storage: fixtures.PVCStorage(0), want: []string{"/dev/anthill/brick-0"}},
		{name: "three claims are named after their templates, in a directory no host has", storage: fixtures.PVCStorage(3), want: []string{"/dev/anthill/brick-0", "/dev/anthill/brick-1", "/dev/anthill/brick-2"}},
		{
			name:    "host devices are used as given",
			storage: &operatorv1alpha1.NodeStorage{Devices: []string{"/dev/nvme0n1", "/dev/vdb"}},
			want:    []string{"/dev/nvme0n1", "/dev/vdb"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NodeDevicePaths(fixtures.Node("gc", "n1", tt.storage))
			if !slices.Equal(got, tt.want) {
				t.Errorf("NodeDevicePaths = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuildManagementEndpoint(t *testing.T) {
	c := fixtures.Cluster("gc")
	if got, want := ManagementEndpoint(c), "http://gc-mgmt.storage.svc:24007"; got != want {
		t.Errorf("default endpoint = %q, want %q", got, want)
	}
	c.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: "https://gd2.example:8443"}
	if got, want := ManagementEndpoint(c), "https://gd2.example:8443"; got != want {
		t.Errorf("overridden endpoint = %q, want %q", got, want)
	}
}

func TestBuildNames(t *testing.T) {
	for got, want := range map[string]string{
		HeadlessServiceName("gc"):   "gc-nodes",
		ManagementServiceName("gc"): "gc-mgmt",
		AuthSecretName("gc"):        "gc-gd2-auth",
		EtcdName("gc"):              "gc-etcd",
		EtcdDataClaimName("gc"):     "data-gc-etcd-0",
		NodePodName("n1"):           "n1-0",
		BrickClaimName("n1", 1):     "brick-1-n1-0",
		EtcdEndpoint(&operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Name: "gc", Namespace: "storage"}}): "http://gc-etcd.storage.svc:2379",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestBuildAuthSecretValueIsGD2Format(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{64}$`)
	a, err := NewAuthSecretValue()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewAuthSecretValue()
	if err != nil {
		t.Fatal(err)
	}
	if !re.MatchString(a) || !re.MatchString(b) {
		t.Fatalf("secrets %q, %q are not 64 lowercase hex characters", a, b)
	}
	if a == b {
		t.Fatal("two generated secrets are equal")
	}
}

func TestBuildAuthSecretRef(t *testing.T) {
	c := fixtures.Cluster("gc")
	if n, k := AuthSecretRef(c); n != "gc-gd2-auth" || k != "secret" {
		t.Errorf("default ref = %s/%s", n, k)
	}
	c.Spec.Management = &operatorv1alpha1.ManagementSpec{AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "mine"}}
	if n, k := AuthSecretRef(c); n != "mine" || k != "secret" {
		t.Errorf("admin ref without key = %s/%s", n, k)
	}
	c.Spec.Management.AuthSecretRef.Key = "token"
	if n, k := AuthSecretRef(c); n != "mine" || k != "token" {
		t.Errorf("admin ref with key = %s/%s", n, k)
	}
}
