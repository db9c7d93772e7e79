//go:build e2e

// Package release tests what `make release` puts in its directory the way
// docs/install.md uses it: the checksums hold, the image layout is one
// index over linux/amd64 and linux/arm64 whose digest the manifests pin,
// and the packaged chart installs from the directory, with the pinned
// image, onto a real control plane.
package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
)

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = framework.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

type index struct {
	MediaType string       `json:"mediaType"`
	Manifests []descriptor `json:"manifests"`
}

// checkImage reads the OCI layout with the standard library: index.json
// names one image index, by the digest in image/digest and the release's
// reference, and that index has one image per platform.
func checkImage(t *testing.T, dir, ref string) {
	t.Helper()
	layout := filepath.Join(dir, "image", "oci")
	var top index
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(layout, "index.json"))), &top); err != nil {
		t.Fatal(err)
	}
	digest := readFile(t, filepath.Join(dir, "image", "digest"))
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != digest || top.Manifests[0].MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("index.json lists %+v; want the one image index %s", top.Manifests, digest)
	}
	name, _, _ := strings.Cut(ref, "@")
	for _, a := range []string{"org.opencontainers.image.ref.name", "io.containerd.image.name"} {
		if got := top.Manifests[0].Annotations[a]; got != name {
			t.Errorf("index.json's %s is %q, want %q", a, got, name)
		}
	}
	raw, err := os.ReadFile(filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:")))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != digest {
		t.Fatalf("the image index blob does not have its digest %s", digest)
	}
	var idx index
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range idx.Manifests {
		if m.Platform != nil {
			platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
		}
	}
	slices.Sort(platforms)
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the image index has platforms %v, want %v", platforms, want)
	}
	for _, p := range []string{"anthill-oci.tar", "anthill-linux-amd64.tar", "anthill-linux-arm64.tar"} {
		if _, err := os.Stat(filepath.Join(dir, "image", p)); err != nil {
			t.Errorf("image archive: %v", err)
		}
	}
}

// operatorImage is the operator container's image in a rendered stream.
func operatorImage(t *testing.T, rendered []byte) string {
	t.Helper()
	for doc := range strings.SplitSeq(string(rendered), "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}
	t.Fatal("no Deployment rendered")
	return ""
}

// TestReleaseInstallsFromItsDirectory builds (or reuses) a release and
// installs its packaged chart with helm, the image pinned to the release's
// digest as docs/install.md does, onto a control plane of its own. kwok
// runs the pods, not the image: what is real there are the objects, so
// the test checks the Deployment runs the pinned image, the CRDs are
// established and the RBAC objects exist.
func TestReleaseInstallsFromItsDirectory(t *testing.T) {
	root := framework.RepoRoot()
	version := readFile(t, filepath.Join(root, "VERSION"))
	// make test's processes share one release (the real-node test
	// installs from it too); alone, the test builds its own.
	shared := os.Getenv("ANTHILL_E2E_SET_DIR")
	if shared == "" {
		shared = t.TempDir()
	}
	release, err := framework.CurrentReleaseDir(context.Background(), root, shared)
	if err != nil {
		t.Fatal(err)
	}
	dir, ref, digest := release.Path, release.ImageRef, release.ImageDigest
	t.Logf("installing from the release directory %s", dir)
	if ref != "quay.io/gluster/anthill:"+version+"@"+digest {
		t.Fatalf("image/ref %q, want quay.io/gluster/anthill:%s@%s", ref, version, digest)
	}

	t.Run("SHA256SUMS holds for every file", func(t *testing.T) {
		if err := release.CheckSums(); err != nil {
			t.Error(err)
		}
	})
	t.Run("the image is one index over linux/amd64 and linux/arm64", func(t *testing.T) { checkImage(t, dir, ref) })
	t.Run("the kustomize manifests run the image by digest", func(t *testing.T) {
		for _, k := range []string{"default", "namespaced"} {
			if got := operatorImage(t, run(t, "kubectl", "kustomize", filepath.Join(dir, "manifests", k))); got != ref {
				t.Errorf("manifests/%s runs %q, want %q", k, got, ref)
			}
		}
	})
	t.Run("the OLM bundle replaces the previous release and runs the image by digest", func(t *testing.T) {
		csv := readFile(t, filepath.Join(dir, "olm", "bundle", "manifests", "anthill.clusterserviceversion.yaml"))
		for _, want := range []string{"containerImage: " + ref, "- image: " + ref, "olm.skipRange: <" + strings.TrimPrefix(version, "v"), "replaces: anthill.v"} {
			if !strings.Contains(csv, want) {
				t.Errorf("the CSV has no %q", want)
			}
		}
	})

	chart := release.Chart()
	helm := strings.TrimSpace(string(run(t, filepath.Join(root, "hack", "build-helm.sh"))))
	helm = helm[strings.LastIndex(helm, "\n")+1:]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := framework.Start(ctx, framework.Options{Zones: 1, NodesPerZone: 2})
	if err != nil {
		t.Fatalf("start the control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	run(t, helm, "install", "anthill", chart, "--kubeconfig", cp.Kubeconfig,
		"--namespace", "anthill-system", "--create-namespace",
		"--set", "image.tag="+version+"@"+digest, "--wait", "--timeout", "2m")

	d, err := cp.Client.AppsV1().Deployments("anthill-system").Get(ctx, "anthill-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != ref {
		t.Errorf("the operator Deployment runs %q, want the release's %q", got, ref)
	}
	if d.Status.AvailableReplicas != *d.Spec.Replicas {
		t.Errorf("helm install --wait returned with %d of %d replicas available", d.Status.AvailableReplicas, *d.Spec.Replicas)
	}
	ext, err := apiextensionsclient.NewForConfig(cp.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"glusterclusters.operator.gluster.org", "glusternodes.operator.gluster.org"} {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("CRD %s: %v", name, err)
			continue
		}
		established := false
		for _, c := range crd.Status.Conditions {
			established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
		}
		if !established {
			t.Errorf("CRD %s is not established: %+v", name, crd.Status.Conditions)
		}
	}
	rbac := cp.Client.RbacV1()
	checks := map[string]func() error{
		"ServiceAccount anthill-system/anthill-operator": func() error {
			_, err := cp.Client.CoreV1().ServiceAccounts("anthill-system").Get(ctx, "anthill-operator", metav1.GetOptions{})
			return err
		},
		"ClusterRoleBinding anthill-operator": func() error {
			b, err := rbac.ClusterRoleBindings().Get(ctx, "anthill-operator", metav1.GetOptions{})
			if err == nil && (b.RoleRef.Name != "anthill-operator" || len(b.Subjects) != 1 || b.Subjects[0].Namespace != "anthill-system") {
				t.Errorf("ClusterRoleBinding anthill-operator binds %+v to %+v", b.RoleRef, b.Subjects)
			}
			return err
		},
		"RoleBinding anthill-system/anthill-leader-election": func() error {
			_, err := rbac.RoleBindings("anthill-system").Get(ctx, "anthill-leader-election", metav1.GetOptions{})
			return err
		},
		"Role anthill-system/anthill-leader-election": func() error {
			_, err := rbac.Roles("anthill-system").Get(ctx, "anthill-leader-election", metav1.GetOptions{})
			return err
		},
		"Role anthill-system/gluster-operator-health": func() error {
			_, err := rbac.Roles("anthill-system").Get(ctx, "gluster-operator-health", metav1.GetOptions{})
			return err
		},
	}
	for _, name := range []string{"anthill-operator", "gluster-view", "gluster-edit", "gluster-admin", "gluster-toolbox"} {
		checks["ClusterRole "+name] = func() error {
			_, err := rbac.ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			return err
		}
	}
	for what, check := range checks {
		if err := check(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
}
