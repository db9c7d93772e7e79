//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gluster/anthill/e2e/framework"
)

// The operator's image as users install it, on a real node: a kubelet,
// containerd and runc run the operator's image, installed twice: the
// image `make image` builds by `kubectl apply -k` over manifests/default,
// and a release directory's image archive and packaged chart as
// docs/install.md has a user without registry access install them
// (checksums, `ctr images import`, `helm install` pinned to the release's
// digest, `helm test`). Nothing is changed but what a user of a dedicated
// node would change: a toleration of the real node's taint and a
// nodeSelector for its label, so the operator's pods run there and
// nowhere else (the kwok nodes would run them as fakes), and, for
// kustomize, the image reference (the same one, said explicitly). The
// GlusterCluster's own pods stay on the kwok nodes, with the GD2
// simulator listening where the node's pods reach the host.
const (
	realNodeNamespace = "anthill-system"
	operatorLease     = "anthill-operator"
	operatorSelector  = "app.kubernetes.io/name=anthill,app.kubernetes.io/component=operator"
	metricsService    = "anthill-operator-metrics"
	// helmTestPod is the chart's helm test hook pod.
	helmTestPod = "anthill-test"
)

func TestOperatorImageOnARealNode(t *testing.T) {
	onRealNode(t, "installs anthill's Deployment, CRDs and cluster-wide RBAC as users do, and runs a kubelet")
	ctx := context.Background()
	root := framework.RepoRoot()

	// The release directory (built by the release dry run, or found) is
	// made while the node starts and the kustomize install runs; the
	// other processes of make test share it (e2e/release installs from
	// it too).
	releaseCtx, cancelRelease := context.WithCancel(ctx)
	releaseDone := make(chan struct{})
	var release *framework.ReleaseDir
	var releaseErr error
	go func() {
		defer close(releaseDone)
		release, releaseErr = framework.CurrentReleaseDir(releaseCtx, root, currentSet.dir)
	}()
	t.Cleanup(func() {
		cancelRelease()
		<-releaseDone
	})

	image := buildOperatorImage(t, root)

	start := time.Now()
	node, err := env.StartRealNode(ctx, framework.RealNodeOptions{})
	if err != nil {
		t.Fatalf("start the real node: %v", err)
	}
	t.Logf("real node %s Ready in %s", node.Name, time.Since(start).Round(time.Second))
	t.Cleanup(func() {
		node.Stop()
		if err := node.Leftovers(); err != nil {
			t.Errorf("the stopped real node left behind: %v", err)
		}
	})
	if err := node.ImportImage(ctx, image.archive); err != nil {
		t.Fatal(err)
	}

	// Each install returns the image it runs and, when it has one, what
	// it checks once both replicas are ready.
	installs := []struct {
		name    string
		install func(t *testing.T) (operatorImage, func(t *testing.T))
		removal func(t *testing.T)
	}{
		{"installed with kubectl apply -k",
			func(t *testing.T) (operatorImage, func(t *testing.T)) {
				kustomizeInstall(t, root, image, "apply")
				return image, nil
			},
			func(t *testing.T) { kustomizeInstall(t, root, image, "delete") }},
		{"installed from the release directory with its chart",
			func(t *testing.T) (operatorImage, func(t *testing.T)) {
				waited := time.Now()
				<-releaseDone
				if releaseErr != nil {
					t.Fatalf("the release directory: %v", releaseErr)
				}
				t.Logf("release directory %s (waited %s for it)", release.Path, time.Since(waited).Round(time.Second))
				img := releaseInstall(t, root, node, release)
				return img, func(t *testing.T) {
					t.Run("helm test passes: anthill check ran on the real node from the release's image", func(t *testing.T) {
						helmTest(t, root, node, img)
					})
				}
			},
			func(t *testing.T) {
				helmRun(t, root, "uninstall", "anthill", "--namespace", realNodeNamespace, "--wait", "--timeout", "2m")
			}},
	}
	for i, in := range installs {
		if !t.Run(in.name, func(t *testing.T) {
			if i > 0 {
				// What the install before left cluster-wide (and what
				// TestMain installed for the operator binary) would be
				// foreign to the next one: start from a cluster without
				// anthill, as a user does.
				kustomizeInstall(t, root, image, "delete")
			}
			img, ready := in.install(t)
			onTheRealNode(t, node, img, ready)
			in.removal(t)
		}) {
			return
		}
	}
}

// onTheRealNode checks the installed operator on the real node; ready,
// when not nil, is what the install checks once both replicas are ready.
func onTheRealNode(t *testing.T, node *framework.RealNode, image operatorImage, ready func(t *testing.T)) {
	ctx := context.Background()
	dep, err := env.Client.AppsV1().Deployments(realNodeNamespace).Get(ctx, "anthill-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := waitOperatorPods(t, node, 2, 3*time.Minute)
	leader, waiting := leaderOf(t, pods, 30*time.Second)
	t.Logf("leader %s, waiting %s", leader.Name, waiting.Name)
	if ready != nil {
		ready(t)
	}

	t.Run("the pods run the image as its user, on a read-only root file system, as the ServiceAccount", func(t *testing.T) {
		for _, p := range pods {
			checkContainer(t, node, p, dep, image)
		}
	})

	t.Run("the operator's soft memory limit is the Deployment's memory limit, less the runtime's share", func(t *testing.T) {
		limit := dep.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().Value()
		want := int64(float64(limit) * 0.9)
		for _, p := range pods {
			got := softLimitOf(t, node, p)
			if got != want {
				t.Errorf("%s: soft memory limit %d bytes; want 90%% of the limit %d, %d", p.Name, got, limit, want)
			}
		}
	})

	t.Run("the metrics Service lists both pods and each serves /metrics", func(t *testing.T) {
		waitMetricsEndpoints(t, pods)
		for _, p := range pods {
			body := get(t, fmt.Sprintf("http://%s:8080/metrics", p.Status.PodIP))
			if !strings.Contains(body, "anthill_") {
				t.Errorf("%s /metrics has no anthill_ metric:\n%.500s", p.Name, body)
			}
		}
	})

	t.Run("the leader brings a GlusterCluster to Ready and through a decommission; the other replica waits", func(t *testing.T) {
		clusterLifecycle(t, node)
		if n := countLines(t, node, waiting, `"msg":"transition"`); n > 0 {
			t.Errorf("the waiting replica %s logged %d transitions", waiting.Name, n)
		}
		if n := countLines(t, node, leader, `"msg":"transition"`); n == 0 {
			t.Errorf("the leader %s logged no transition", leader.Name)
		}
		for _, p := range pods {
			for _, bad := range []string{"read-only file system", "permission denied", "forbidden"} {
				if n := countLines(t, node, p, bad); n > 0 {
					t.Errorf("%s logged %q %d times", p.Name, bad, n)
				}
			}
		}
	})

	t.Run("deleting the leader's pod releases its Lease at once and the other replica takes over", func(t *testing.T) {
		leaseHandover(t, leader, waiting)
	})
}

// operatorImage is an image the test installs, from an OCI image layout
// (what `make image` built, or a release's): its archive, reference,
// digests and user. digest is the layout's top digest: the image's
// manifest for `make image`, the image index for a release (then
// manifestDigest is this platform's manifest in it).
type operatorImage struct {
	archive, ref, digest, manifestDigest, configDigest, user string
	// imageID, when set, is the image ID the kubelet must report for a
	// container of the image: REPOSITORY@DIGEST, once the node holds the
	// image under its digest.
	imageID string
}

// buildOperatorImage runs hack/build-image.sh (what `make image` runs)
// into a directory of the test and reads the image's digests and user.
func buildOperatorImage(t *testing.T, root string) operatorImage {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "hack", "build-image.sh"), out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/build-image.sh: %v\n%s", err, b)
	}
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return readOperatorImage(t, filepath.Join(out, "oci"), filepath.Join(out, "anthill.tar"), "quay.io/gluster/anthill:"+strings.TrimSpace(string(version)))
}

// readOperatorImage reads the image of an OCI layout: index.json names
// one image, or one image index, whose image for this machine's platform
// the node runs.
func readOperatorImage(t *testing.T, layout, archive, ref string) operatorImage {
	t.Helper()
	type descriptor struct {
		MediaType, Digest string
		Platform          *struct{ OS, Architecture string }
	}
	var index struct{ Manifests []descriptor }
	readJSON(t, filepath.Join(layout, "index.json"), &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("the image layout %s has %d manifests; want 1", layout, len(index.Manifests))
	}
	img := operatorImage{archive: archive, ref: ref, digest: index.Manifests[0].Digest, manifestDigest: index.Manifests[0].Digest}
	if index.Manifests[0].MediaType == "application/vnd.oci.image.index.v1+json" {
		var platforms struct{ Manifests []descriptor }
		readJSON(t, blobPath(layout, img.digest), &platforms)
		img.manifestDigest = ""
		for _, m := range platforms.Manifests {
			if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == runtime.GOARCH {
				img.manifestDigest = m.Digest
			}
		}
		if img.manifestDigest == "" {
			t.Fatalf("the image index %s has no linux/%s image", img.digest, runtime.GOARCH)
		}
	}
	var manifest struct {
		Config struct{ Digest string } `json:"config"`
	}
	readJSON(t, blobPath(layout, img.manifestDigest), &manifest)
	img.configDigest = manifest.Config.Digest
	var config struct {
		Config struct{ User string } `json:"config"`
	}
	readJSON(t, blobPath(layout, img.configDigest), &config)
	img.user = config.Config.User
	return img
}

func blobPath(layout, digest string) string {
	return filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// kustomizeInstall writes the overlay a user of a dedicated node would
// write over manifests/default and runs kubectl verb -k on it.
func kustomizeInstall(t *testing.T, root string, image operatorImage, verb string, args ...string) {
	t.Helper()
	dir := t.TempDir()
	// kustomize takes a base by a relative path only.
	base, err := filepath.Rel(dir, filepath.Join(root, "manifests", "default"))
	if err != nil {
		t.Fatal(err)
	}
	name, tag, _ := strings.Cut(image.ref, ":")
	overlay := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %s
images:
  - name: quay.io/gluster/anthill
    newName: %s
    newTag: %s
patches:
  - target:
      kind: Deployment
      name: anthill-operator
    patch: |-
      - op: add
        path: /spec/template/spec/tolerations
        value:
          - key: %s
            operator: Equal
            value: %q
            effect: %s
      - op: add
        path: /spec/template/spec/nodeSelector
        value:
          %s: "true"
`, base, name, tag,
		framework.RealNodeTaint.Key, framework.RealNodeTaint.Value, framework.RealNodeTaint.Effect, framework.RealNodeLabel)
	// Further operator arguments, after the shipped ones (the last of a
	// repeated flag wins).
	for _, a := range args {
		overlay += fmt.Sprintf("      - op: add\n        path: /spec/template/spec/containers/0/args/-\n        value: %q\n", a)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	kargs := []string{"--kubeconfig", env.Kubeconfig, verb, "-k", dir}
	if verb == "delete" {
		kargs = append(kargs, "--ignore-not-found", "--wait", "--timeout=3m")
	}
	cmd := exec.Command("kubectl", kargs...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(kargs[2:], " "), err, b)
	}
}

// releaseInstall installs the operator from a release directory the way
// docs/install.md tells a user without registry access: check the
// checksums, import the image archive into the node's containerd, and
// install the packaged chart with the image pinned to the release's
// digest, the real node's toleration and nodeSelector as values.
func releaseInstall(t *testing.T, root string, node *framework.RealNode, release *framework.ReleaseDir) operatorImage {
	t.Helper()
	if err := release.CheckSums(); err != nil {
		t.Fatalf("sha256sum -c SHA256SUMS: %v", err)
	}
	image := readOperatorImage(t, release.ImageLayout(), release.ImageArchive(), release.ImageRef)
	if image.digest != release.ImageDigest {
		t.Fatalf("the release's image layout has %s; image/digest says %s", image.digest, release.ImageDigest)
	}
	// The node found the image by the release's digest, not by its tag.
	image.imageID = repositoryOf(release.ImageRef) + "@" + release.ImageDigest
	// The import docs/install.md gives: every platform's content, the
	// tag from the archive, and the image by digest under the
	// repository's name (--base-name; without it ctr names the digest
	// image import-DATE@DIGEST, which the pinned reference does not find).
	flags := []string{"--all-platforms", "--base-name", repositoryOf(release.ImageRef), "--digests"}
	importLine := "ctr -n k8s.io images import " + strings.Join(flags, " ") + " image/anthill-oci.tar"
	if doc, err := os.ReadFile(filepath.Join(root, "docs", "install.md")); err != nil || !strings.Contains(string(doc), importLine) {
		t.Errorf("docs/install.md does not give the import the test runs, %q (%v)", importLine, err)
	}
	if err := node.ImportImage(context.Background(), release.ImageArchive(), flags...); err != nil {
		t.Fatal(err)
	}
	tolerations := fmt.Sprintf(`[{"key":%q,"operator":"Equal","value":%q,"effect":%q}]`,
		framework.RealNodeTaint.Key, framework.RealNodeTaint.Value, framework.RealNodeTaint.Effect)
	helmRun(t, root, "install", "anthill", release.Chart(),
		"--namespace", realNodeNamespace, "--create-namespace",
		"--set", "image.tag="+release.Version()+"@"+release.ImageDigest,
		"--set-json", "tolerations="+tolerations,
		"--set-json", fmt.Sprintf(`nodeSelector={%q:"true"}`, framework.RealNodeLabel))
	dep, err := env.Client.AppsV1().Deployments(realNodeNamespace).Get(context.Background(), "anthill-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != release.ImageRef {
		t.Fatalf("the chart's Deployment runs %q; want the release's %q", got, release.ImageRef)
	}
	return image
}

// repositoryOf is the repository of an image reference REPOSITORY:TAG@DIGEST.
func repositoryOf(ref string) string {
	named, _, _ := strings.Cut(ref, "@")
	return named[:strings.LastIndex(named, ":")]
}

// helmTest runs `helm test` for the release and requires it to pass, its
// hook pod to have run on the real node from the installed image and to
// have succeeded. The hook pod is deleted once it succeeds, so a watch
// sees where it ran and how it ended.
func helmTest(t *testing.T, root string, node *framework.RealNode, image operatorImage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w, err := env.Client.CoreV1().Pods(realNodeNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", helmTestPod).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ended := make(chan corev1.Pod, 1)
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
				ended <- *p
				return
			}
		}
	}()
	out := helmRun(t, root, "test", "anthill", "--namespace", realNodeNamespace, "--timeout", "2m")
	t.Logf("helm test:\n%s", out)
	var p corev1.Pod
	select {
	case p = <-ended:
	case <-ctx.Done():
		t.Fatalf("helm test passed but the watch saw no %s pod end", helmTestPod)
	}
	if p.Spec.NodeName != node.Name {
		t.Errorf("the helm test pod ran on %q, not the real node", p.Spec.NodeName)
	}
	if p.Status.Phase != corev1.PodSucceeded || len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("the helm test pod ended %s", podState(p))
	}
	st := p.Status.ContainerStatuses[0]
	t.Logf("the helm test pod ran on %s, image %s", p.Spec.NodeName, st.ImageID)
	if !runsImage(st, image) {
		t.Errorf("the helm test pod ran image %s; want the release's %s", st.ImageID, image.digest)
	}
	if st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
		t.Errorf("the helm test container ended %+v", st.State)
	}
}

// helmRun runs the pinned helm on the test's cluster and returns what it
// printed.
func helmRun(t *testing.T, root string, args ...string) string {
	t.Helper()
	build := exec.Command(filepath.Join(root, "hack", "build-helm.sh"))
	out, err := build.Output()
	if err != nil {
		t.Fatalf("hack/build-helm.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	cmd := exec.Command(lines[len(lines)-1], append(args, "--kubeconfig", env.Kubeconfig)...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return string(b)
}

// waitOperatorPods waits until want operator pods run on the real node,
// every container ready (its probes pass), and returns them.
func waitOperatorPods(t *testing.T, node *framework.RealNode, want int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		if err := node.Healthy(); err != nil {
			return false, err
		}
		l, err := env.Client.CoreV1().Pods(realNodeNamespace).List(ctx, metav1.ListOptions{LabelSelector: operatorSelector})
		if err != nil {
			return false, err
		}
		pods = pods[:0]
		var states []string
		for _, p := range l.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			if p.Spec.NodeName != node.Name {
				return false, fmt.Errorf("pod %s is on %q, not the real node", p.Name, p.Spec.NodeName)
			}
			if podReady(p) {
				pods = append(pods, p)
			}
			states = append(states, p.Name+"="+podState(p))
		}
		if len(pods) == want && len(states) == want {
			return true, nil
		}
		return false, fmt.Errorf("%d of %d operator pods ready: %s", len(pods), want, strings.Join(states, " "))
	})
	if err != nil {
		t.Fatalf("waiting for the operator's pods: %v", err)
	}
	return pods
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podState(p corev1.Pod) string {
	s := string(p.Status.Phase)
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			s += "/" + c.State.Waiting.Reason
		case c.State.Terminated != nil:
			s += "/" + c.State.Terminated.Reason
		}
		if c.RestartCount > 0 {
			s += fmt.Sprintf("/restarts:%d", c.RestartCount)
		}
	}
	return s
}

// leaderOf waits until the Lease names one of the pods, and returns it
// and the other.
func leaderOf(t *testing.T, pods []corev1.Pod, timeout time.Duration) (leader, waiting corev1.Pod) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		l, err := env.Client.CoordinationV1().Leases(realNodeNamespace).Get(ctx, operatorLease, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		holder := ptrString(l.Spec.HolderIdentity)
		for i, p := range pods {
			if p.Name == holder {
				leader, waiting = p, pods[1-i]
				return true, nil
			}
		}
		return false, fmt.Errorf("the Lease is held by %q, not an operator pod", holder)
	})
	if err != nil {
		t.Fatal(err)
	}
	return leader, waiting
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkContainer checks what runc ran for the operator container of p:
// the image installed, as the image's user, with a read-only
// root file system and the ServiceAccount's token mounted.
func checkContainer(t *testing.T, node *framework.RealNode, p corev1.Pod, dep *appsv1.Deployment, image operatorImage) {
	t.Helper()
	if p.Spec.ServiceAccountName != "anthill-operator" {
		t.Errorf("%s runs as ServiceAccount %q", p.Name, p.Spec.ServiceAccountName)
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("%s has %d containers", p.Name, len(p.Status.ContainerStatuses))
	}
	st := p.Status.ContainerStatuses[0]
	if !runsImage(st, image) {
		t.Errorf("%s runs image %s; want the one installed, %s (manifest %s, config %s)", p.Name, st.ImageID, image.digest, image.manifestDigest, image.configDigest)
	}
	if st.RestartCount > 0 {
		t.Errorf("%s restarted %d times", p.Name, st.RestartCount)
	}
	raw, err := node.ContainerSpec(context.Background(), strings.TrimPrefix(st.ContainerID, "containerd://"))
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Spec struct {
			Process struct {
				User struct{ UID, GID uint32 } `json:"user"`
			} `json:"process"`
			Root struct {
				Readonly bool `json:"readonly"`
			} `json:"root"`
			Mounts []struct {
				Destination string   `json:"destination"`
				Options     []string `json:"options"`
			} `json:"mounts"`
		} `json:"Spec"`
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatalf("ctr containers info: %v", err)
	}
	uid, gid, _ := strings.Cut(image.user, ":")
	if got := fmt.Sprintf("%d:%d", info.Spec.Process.User.UID, info.Spec.Process.User.GID); got != uid+":"+gid {
		t.Errorf("%s runs as %s; want the image's user %s", p.Name, got, image.user)
	}
	if info.Spec.Process.User.UID == 0 {
		t.Errorf("%s runs as root", p.Name)
	}
	if !info.Spec.Root.Readonly {
		t.Errorf("%s: the root file system is writable", p.Name)
	}
	if want := *dep.Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem; !want {
		t.Errorf("the Deployment does not ask for a read-only root file system")
	}
	token := false
	for _, m := range info.Spec.Mounts {
		token = token || m.Destination == "/var/run/secrets/kubernetes.io/serviceaccount"
	}
	if !token {
		t.Fatalf("%s has no ServiceAccount token mounted", p.Name)
	}
	// The token the operator presents names its ServiceAccount.
	ctx := context.Background()
	raw, err = node.ContainerFile(ctx, strings.TrimPrefix(st.ContainerID, "containerd://"), "/var/run/secrets/kubernetes.io/serviceaccount/token")
	if err != nil {
		t.Fatal(err)
	}
	review, err := env.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: string(raw)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "system:serviceaccount:" + realNodeNamespace + ":anthill-operator"; !review.Status.Authenticated || review.Status.User.Username != want {
		t.Errorf("%s's token authenticates as %q (authenticated %t); want %s", p.Name, review.Status.User.Username, review.Status.Authenticated, want)
	}
}

// runsImage says whether a container runs image: its image ID (what the
// kubelet reports from containerd) is the image's imageID, or when that
// is not set names one of the image's digests.
func runsImage(st corev1.ContainerStatus, image operatorImage) bool {
	if image.imageID != "" {
		return st.ImageID == image.imageID
	}
	for _, d := range []string{image.digest, image.manifestDigest, image.configDigest} {
		if d != "" && strings.Contains(st.ImageID, d) {
			return true
		}
	}
	return false
}

// softLimitOf reads the soft memory limit the operator in p logged it
// set from its container's memory limit.
func softLimitOf(t *testing.T, node *framework.RealNode, p corev1.Pod) int64 {
	t.Helper()
	for _, l := range logLines(t, node, p) {
		if !strings.Contains(l, "Go soft memory limit set from the container's memory limit") {
			continue
		}
		var entry struct {
			Bytes int64 `json:"bytes"`
		}
		if i := strings.IndexByte(l, '{'); i >= 0 && json.Unmarshal([]byte(l[i:]), &entry) == nil {
			return entry.Bytes
		}
	}
	t.Fatalf("%s logged no soft memory limit", p.Name)
	return 0
}

// logLines are the lines the operator container of p wrote, from the
// kubelet's CRI log files ("<time> <stream> <tag> <line>").
func logLines(t *testing.T, node *framework.RealNode, p corev1.Pod) []string {
	t.Helper()
	raw, err := node.ContainerLog(&p, "operator")
	if err != nil {
		t.Fatalf("log of %s: %v", p.Name, err)
	}
	var lines []string
	s := bufio.NewScanner(bytes.NewReader(raw))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		parts := strings.SplitN(s.Text(), " ", 4)
		if len(parts) == 4 {
			lines = append(lines, parts[3])
		}
	}
	return lines
}

func countLines(t *testing.T, node *framework.RealNode, p corev1.Pod, substr string) int {
	t.Helper()
	n := 0
	for _, l := range logLines(t, node, p) {
		if strings.Contains(strings.ToLower(l), strings.ToLower(substr)) {
			n++
		}
	}
	return n
}

// waitMetricsEndpoints waits until the metrics Service's EndpointSlices
// list every pod, ready.
func waitMetricsEndpoints(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	err := framework.WaitFor(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
		l, err := env.Client.DiscoveryV1().EndpointSlices(realNodeNamespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + metricsService})
		if err != nil {
			return false, err
		}
		ready := map[string]bool{}
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.TargetRef != nil && e.Conditions.Ready != nil && *e.Conditions.Ready {
					ready[e.TargetRef.Name] = true
				}
			}
		}
		for _, p := range pods {
			if !ready[p.Name] {
				return false, fmt.Errorf("the %s Service's endpoints do not list %s ready (%v)", metricsService, p.Name, ready)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b)
}

// clusterLifecycle creates a GlusterCluster of one node per zone whose GD2
// is a simulator listening where the real node's pods reach the host,
// waits for it Ready, decommissions a node (a replacement joins), and
// deletes the cluster.
func clusterLifecycle(t *testing.T, node *framework.RealNode) {
	ctx := context.Background()
	ns := env.Namespace(t)
	sim, err := env.StartGD2Sim(ctx, framework.SimOptions{Namespace: ns, Addr: node.HostIP + ":0", Seed: 1, WriteRate: 5, HealRate: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	const name = "on-a-real-node"
	if err := env.CreateSimAuthSecret(ctx, ns, name, sim); err != nil {
		t.Fatal(err)
	}
	c, err := framework.SampleCluster(ns, name, sim, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The CRDs may have just been installed.
	err = framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{})
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	var victim string
	for n := range nodes {
		victim = n
		break
	}
	requestOnNode(t, ns, victim, "decommission")
	waitNodeState(t, ns, victim, "", 3*time.Minute)
	waitNodes(t, ns, name, 3, 3*time.Minute)
	if v := sim.Violations(); len(v) > 0 {
		t.Errorf("simulator violations: %v", v)
	}
	if err := anthill.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("cluster %s still there (%v)", name, err)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// leaseHandover deletes the leader's pod as kubectl delete does (SIGTERM,
// the grace period) and watches the Lease: the leader must release it as
// it stops, so the waiting replica takes it over at its next retry, far
// sooner than the Lease would expire.
func leaseHandover(t *testing.T, leader, waiting corev1.Pod) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	leases := env.Client.CoordinationV1().Leases(realNodeNamespace)
	l, err := leases.Get(ctx, operatorLease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	duration := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	w, err := leases.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", operatorLease).String(), ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	deleted := time.Now()
	if err := env.Client.CoreV1().Pods(realNodeNamespace).Delete(ctx, leader.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	released := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("no new leader %s after deleting %s", time.Since(deleted).Round(time.Millisecond), leader.Name)
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the Lease watch ended")
			}
			if ev.Type != watch.Modified {
				continue
			}
			holder := ptrString(ev.Object.(*coordinationv1.Lease).Spec.HolderIdentity)
			after := time.Since(deleted)
			switch holder {
			case leader.Name:
				continue
			case "":
				released = after
				continue
			}
			t.Logf("Lease released after %s, taken by %s after %s (lease duration %s)", released.Round(time.Millisecond), holder, after.Round(time.Millisecond), duration)
			if released == 0 {
				t.Errorf("%s never released the Lease: %s took it over", leader.Name, holder)
			}
			// The waiting replica tries every retry period; the pod the
			// ReplicaSet starts in the deleted one's place may, rarely,
			// start and try first. Either is a replica of the Deployment.
			if holder != waiting.Name && !strings.HasPrefix(holder, strings.TrimSuffix(leader.GenerateName, "-")) {
				t.Errorf("the Lease went to %s; want the waiting replica %s (or the leader's replacement)", holder, waiting.Name)
			}
			if after > duration/2 {
				t.Errorf("the new leader took over %s after the leader's pod was deleted; with the Lease released on SIGTERM it takes a retry period, well under the lease duration %s", after, duration)
			}
			return
		}
	}
}
