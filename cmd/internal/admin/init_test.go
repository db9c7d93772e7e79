package admin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/kube/objects"
)

func TestQuestionForMapsAdmissionFieldsBackToQuestions(t *testing.T) {
	for path, want := range map[string]string{
		"metadata.name":                                    qName,
		"metadata.namespace":                               qNamespace,
		"spec.mode":                                        qMode,
		"spec.nodeTemplates":                               qZones,
		"spec.nodeTemplates[1]":                            qZones,
		"spec.nodeTemplates[0].zone":                       qZones,
		"spec.nodeTemplates[2].nodes":                      qNodesPerZone,
		"spec.nodeTemplates[0].minNodes":                   qMinNodesPerZone,
		"spec.nodeTemplates[0].storage.capacity":           qCapacity,
		"spec.nodeTemplates[0].storage.storageClassName":   qStorageClass,
		"spec.nodeTemplates[0].storage.deviceCount":        qDeviceCount,
		"spec.external.nodes[0].address":                   qExternalNodes,
		"spec.gluster":                                     qImage,
		"spec.gluster.version":                             qVersion,
		"spec.drivers[0]":                                  qDrivers,
		"spec.csi.version":                                 qDrivers,
		"spec.caSecretRef.name":                            qCASecret,
		"spec.management":                                  qMgmtEndpoint,
		"spec.management.authSecretRef.name":               qMgmtSecret,
		"spec.failurePolicy.offlineGrace":                  qOfflineGrace,
		"spec.failurePolicy.permissibleDowntime":           qDowntime,
		"spec.upgradePolicy.perZone":                       qPerZone,
		".spec.upgradePolicy.healTimeout":                  qHealTimeout,
		"spec.management.endpoint":                         qMgmtEndpoint,
		"spec.paused":                                      "",
		"spec":                                             "",
		"":                                                 "",
		"spec.nodeTemplatesX":                              "",
		"spec.nodeTemplates[0].storage.capacity.something": qCapacity,
	} {
		if got := questionFor(path); got != want {
			t.Errorf("questionFor(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestEveryQuestionIsItsOwnFlag(t *testing.T) {
	cmd, _, err := (&root{name: PluginName, kube: newKubeFlags()}).command().Find([]string{"init"})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range initQuestions {
		if q.key == qNamespace {
			if cmd.InheritedFlags().Lookup(q.key) == nil {
				t.Errorf("no -n/--namespace on init")
			}
			continue
		}
		f := cmd.Flags().Lookup(q.key)
		if f == nil || f.Usage == "" {
			t.Errorf("question %q has no documented flag --%s", q.prompt, q.key)
		}
		if len(q.paths) == 0 {
			t.Errorf("question %q sets no field", q.key)
		}
	}
}

func TestClusterObjectFollowsTheMode(t *testing.T) {
	tests := []struct {
		name string
		a    answers
		want string
	}{
		{
			name: "manual: one template per zone, numbers and booleans typed, - unsets",
			a: answers{qName: "g", qNamespace: "ns", qMode: "manual", qZones: "z1, z2", qNodesPerZone: "2", qMinNodesPerZone: "1",
				qStorageClass: "-", qCapacity: "1Gi", qDeviceCount: "x", qImage: "img", qVersion: "4.1", qDrivers: "file",
				qCASecret: "ca", qMgmtEndpoint: "https://gd2.example.com", qMgmtSecret: "gd2", qDowntime: "1h", qOfflineGrace: "1m", qMaxParallel: "2", qPerZone: "no", qHealTimeout: "2h"},
			want: `apiVersion: operator.gluster.org/v1alpha1
kind: GlusterCluster
metadata:
  name: g
  namespace: ns
spec:
  caSecretRef:
    name: ca
  drivers:
  - file
  failurePolicy:
    offlineGrace: 1m
    permissibleDowntime: 1h
  gluster:
    image: img
    version: "4.1"
  management:
    authSecretRef:
      name: gd2
    endpoint: https://gd2.example.com
  mode: manual
  nodeTemplates:
  - name: z1
    nodes: 2
    storage:
      capacity: 1Gi
      deviceCount: x
    zone: z1
  - name: z2
    nodes: 2
    storage:
      capacity: 1Gi
      deviceCount: x
    zone: z2
  upgradePolicy:
    healTimeout: 2h
    maxParallel: 2
    perZone: false
`,
		},
		{
			name: "automatic: minNodes and maxNodes, a boolean left as typed",
			a:    answers{qName: "g", qMode: "automatic", qZones: "z1", qNodesPerZone: "3", qMinNodesPerZone: "1", qMaxNodesPerZone: "4", qStorageClass: "fast", qPerZone: "maybe"},
			want: `apiVersion: operator.gluster.org/v1alpha1
kind: GlusterCluster
metadata:
  name: g
spec:
  mode: automatic
  nodeTemplates:
  - maxNodes: 4
    minNodes: 1
    name: z1
    storage:
      storageClassName: fast
    zone: z1
  upgradePolicy:
    perZone: maybe
`,
		},
		{
			name: "external: addresses, no templates, no image, no policies",
			a:    answers{qName: "g", qMode: "external", qZones: "z1", qExternalNodes: "a.example.com,10.0.0.9", qImage: "img", qVersion: "4.1.0", qDowntime: "1h"},
			want: `apiVersion: operator.gluster.org/v1alpha1
kind: GlusterCluster
metadata:
  name: g
spec:
  external:
    nodes:
    - address: a.example.com
    - address: 10.0.0.9
  gluster:
    version: 4.1.0
  mode: external
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := yaml.Marshal(clusterObject(tt.a))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

var clusterGK = schema.GroupKind{Group: "operator.gluster.org", Kind: "GlusterCluster"}

func invalid(path *field.Path, value any, msg string) error {
	return apierrors.NewInvalid(clusterGK, "g", field.ErrorList{field.Invalid(path, value, msg)})
}

func TestProblemsOfSplitsAdmissionsVerdict(t *testing.T) {
	templates := field.NewPath("spec", "nodeTemplates")
	tests := []struct {
		name   string
		err    error
		wantOK bool
		want   []problem
	}{
		{
			name: "each cause with its field and question, the same problem of every template once",
			err: apierrors.NewInvalid(clusterGK, "g", field.ErrorList{
				field.Invalid(templates.Index(0).Child("storage", "capacity"), "0", "must be positive"),
				field.Invalid(templates.Index(1).Child("storage", "capacity"), "0", "must be positive"),
				field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid"),
				field.Required(field.NewPath("spec", "gluster", "version"), "needed"),
				field.Invalid(field.NewPath("spec", "paused"), "x", "odd"),
			}),
			wantOK: true,
			want: []problem{
				{question: qCapacity, text: `spec.nodeTemplates[0].storage.capacity: Invalid value: "0": must be positive`},
				{question: qVersion, text: "spec.gluster.version: Required value: needed"},
				{question: "", text: `spec.paused: Invalid value: "x": odd`},
			},
		},
		{
			name: "a cluster of that name exists", err: apierrors.NewAlreadyExists(schema.GroupResource{Group: "operator.gluster.org", Resource: "glusterclusters"}, "g"),
			wantOK: true, want: []problem{{question: qName, text: `glusterclusters.operator.gluster.org "g" already exists`}},
		},
		{
			name: "no such namespace", err: apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "nope"),
			wantOK: true, want: []problem{{question: qNamespace, text: `namespaces "nope" not found`}},
		},
		{
			name: "forbidden is a verdict no question owns", err: apierrors.NewForbidden(schema.GroupResource{Resource: "glusterclusters"}, "g", errors.New("no")),
			wantOK: true, want: []problem{{text: `glusterclusters "g" is forbidden: no`}},
		},
		{name: "a failing API server is no verdict", err: apierrors.NewInternalError(errors.New("boom"))},
		{name: "unauthorized is no verdict", err: apierrors.NewUnauthorized("who")},
		{name: "a network error is no verdict", err: errors.New("connection refused")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := problemsOf(tt.err)
			if ok != tt.wantOK || len(got) != len(tt.want) {
				t.Fatalf("problemsOf = %+v, %t; want %+v, %t", got, ok, tt.want, tt.wantOK)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("problem %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// fakeAdmission judges objects with rules of its own, standing in for the
// CRD's, and records what was created for real.
type fakeAdmission struct {
	rules   []func(obj map[string]any) error
	checks  int
	created []map[string]any
	// down makes every request fail as an unreachable API server.
	down bool
}

func (f *fakeAdmission) createCluster(_ context.Context, _ string, obj map[string]any, dryRun bool) error {
	if f.down {
		return errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	f.checks++
	for _, rule := range f.rules {
		if err := rule(obj); err != nil {
			return err
		}
	}
	if !dryRun {
		f.created = append(f.created, obj)
	}
	return nil
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

// positiveCapacity rejects a capacity of 0 as the CRD's rule does.
func positiveCapacity(obj map[string]any) error {
	ts, _ := spec(obj)["nodeTemplates"].([]any)
	var errs field.ErrorList
	for i, tmpl := range ts {
		if s := tmpl.(map[string]any)["storage"].(map[string]any); s["capacity"] == "0" {
			errs = append(errs, field.Invalid(field.NewPath("spec", "nodeTemplates").Index(i).Child("storage", "capacity"), "0", "storage.capacity must be a positive quantity such as 500Gi"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(clusterGK, "g", errs)
	}
	return nil
}

// viewOf is a Kubernetes API with two zones, a default StorageClass and the
// operator's Deployment.
func viewOf() *kubefake.Clientset {
	node := func(name, zone string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{objects.ZoneLabel: zone}}}
	}
	return kubefake.NewClientset(
		node("a1", "zone-a"), node("a2", "zone-a"), node("b1", "zone-b"), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "slow"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{defaultClassAnnotation: "true"}}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "anthill-system", Name: "anthill-operator", Labels: map[string]string{"app.kubernetes.io/name": "anthill", "app.kubernetes.io/component": "operator"}},
			Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "quay.io/gluster/anthill:v0.1.0"}}}}},
			Status:     appsv1.DeploymentStatus{ReadyReplicas: 1},
		},
	)
}

func newWizard(kc *kubefake.Clientset, adm *fakeAdmission, in string, opts initOptions, given answers) (*initWizard, *bytes.Buffer) {
	var out bytes.Buffer
	if given == nil {
		given = answers{}
	}
	return &initWizard{
		kc: kc, creator: adm, given: given, namespace: "ns", opts: opts, prog: PluginName,
		p: newPrompter(strings.NewReader(in), &out), out: &out, errOut: &out,
	}, &out
}

func TestInitInterviewAsksAgainWithAdmissionsMessage(t *testing.T) {
	adm := &fakeAdmission{rules: []func(map[string]any) error{positiveCapacity}}
	// namespace, name, mode, zones, nodes, class, capacity (wrong, then
	// right), and the defaults of the rest; then yes.
	in := "\nmine\n\n\n2\n\n0\n20Gi\n" + strings.Repeat("\n", 12) + "y\n"
	w, out := newWizard(viewOf(), adm, in, initOptions{}, nil)
	if err := w.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	text := out.String()
	for _, want := range []string{
		"Kubernetes nodes: 4; zones: zone-a (2), zone-b (1)\n",
		"StorageClasses: fast (default), slow\n",
		"anthill operator: v0.1.0 (image quay.io/gluster/anthill:v0.1.0; Deployment anthill-system/anthill-operator, 1 of 1 replicas ready)\n",
		"Zones, comma-separated (one node template each) [zone-a,zone-b]: ",
		"StorageClass of the brick claims [fast]: ",
		"Capacity of each brick claim [100Gi]:   rejected: spec.nodeTemplates[0].storage.capacity: Invalid value: \"0\": storage.capacity must be a positive quantity such as 500Gi\nCapacity of each brick claim [100Gi]: ",
		"Create GlusterCluster ns/mine? [y/N]: ",
		"GlusterCluster ns/mine created\nfollow it with: kubectl gluster status mine -n ns\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "rejected:") != 1 {
		t.Errorf("the capacity of each template should be rejected once:\n%s", text)
	}
	if len(adm.created) != 1 {
		t.Fatalf("%d clusters created, want 1", len(adm.created))
	}
	got, _ := yaml.Marshal(adm.created[0])
	for _, want := range []string{"name: mine", "nodes: 2", "capacity: 20Gi", "storageClassName: fast", "zone: zone-b"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("created cluster lacks %q:\n%s", want, got)
		}
	}
}

func TestInitInterviewGoesBackToTheAnswerAProblemIsAbout(t *testing.T) {
	// Once the version is answered, admission rejects the name: the
	// wizard goes back to the name, then asks the rest again.
	nameTaken := func(obj map[string]any) error {
		g, _ := spec(obj)["gluster"].(map[string]any)
		if obj["metadata"].(map[string]any)["name"] == "taken" && g["version"] == "9.9.9" {
			return invalid(field.NewPath("metadata", "name"), "taken", "not with this version")
		}
		return nil
	}
	adm := &fakeAdmission{rules: []func(map[string]any) error{nameTaken}}
	in := "\ntaken\n\n\n\n\n\n\n\n9.9.9\nfree\n" + strings.Repeat("\n", 20)
	w, out := newWizard(viewOf(), adm, in, initOptions{output: outputYAML}, nil)
	if err := w.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	text := out.String()
	if !strings.Contains(text, `rejected: metadata.name: Invalid value: "taken": not with this version`) || !strings.Contains(text, `(asking "Cluster name" again)`) {
		t.Errorf("the wizard should go back to the name:\n%s", text)
	}
	if !strings.Contains(text, "(asking \"Cluster name\" again)\nCluster name [gluster]: ") {
		t.Errorf("the rejected name should not be offered again:\n%s", text)
	}
	if !strings.Contains(text, "Gluster version [9.9.9]: ") {
		t.Errorf("asked again, a question should offer the answer admission took:\n%s", text)
	}
	if !strings.Contains(text, "name: free") || len(adm.created) != 0 {
		t.Errorf("-o yaml should print the cluster named free and create nothing (%d created):\n%s", len(adm.created), text)
	}
}

func TestInitInterviewBlamesANewUnmappedProblemOnTheLastAnswer(t *testing.T) {
	calls := 0
	odd := func(obj map[string]any) error {
		if spec(obj)["mode"] == "weird" {
			calls++
			return apierrors.NewBadRequest("the server does not like this mode")
		}
		return nil
	}
	adm := &fakeAdmission{rules: []func(map[string]any) error{odd}}
	in := "\n\nweird\n\n" + strings.Repeat("\n", 20)
	w, out := newWizard(viewOf(), adm, in, initOptions{output: outputJSON}, nil)
	if err := w.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "Mode (manual, automatic, external) [manual]:   rejected: the server does not like this mode\nMode") || calls != 1 {
		t.Errorf("the mode should be asked again with the message:\n%s", out)
	}
	if !strings.Contains(out.String(), `"mode": "manual"`) {
		t.Errorf("-o json should print the cluster:\n%s", out)
	}
}

func TestInitFailsClearly(t *testing.T) {
	tests := []struct {
		name    string
		adm     *fakeAdmission
		in      string
		opts    initOptions
		given   answers
		wantErr string
		code    int
	}{
		{name: "the end of input before every answer", adm: &fakeAdmission{}, in: "\nx\n", wantErr: `no answer to "Mode (manual, automatic, external)" (end of input); nothing created`, code: cli.ExitFailure},
		{name: "no confirmation", adm: &fakeAdmission{}, in: strings.Repeat("\n", 19) + "n\n", wantErr: "not confirmed; nothing created", code: cli.ExitFailure},
		{name: "no API server", adm: &fakeAdmission{down: true}, in: "\n", wantErr: "dry-run create of the GlusterCluster: dial tcp", code: cli.ExitFailure},
		{
			name: "non-interactive: admission's message, naming the flag", adm: &fakeAdmission{rules: []func(map[string]any) error{positiveCapacity}},
			opts: initOptions{nonInteractive: true, yes: true}, given: answers{qCapacity: "0", qNamespace: "ns"},
			wantErr: `--capacity=0: spec.nodeTemplates[0].storage.capacity: Invalid value: "0": storage.capacity must be a positive quantity such as 500Gi`, code: cli.ExitFailure,
		},
		{
			name: "non-interactive: a flag of another mode", adm: &fakeAdmission{}, opts: initOptions{nonInteractive: true, yes: true},
			given: answers{qMode: "external", qZones: "a"}, wantErr: "--zones does not apply in mode external", code: cli.ExitUsage,
		},
		{
			name: "non-interactive: a namespace admission refuses", code: cli.ExitFailure, opts: initOptions{nonInteractive: true, yes: true}, given: answers{qNamespace: "gone"},
			adm: &fakeAdmission{rules: []func(map[string]any) error{func(map[string]any) error {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "gone")
			}}},
			wantErr: `-n gone: namespaces "gone" not found`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, out := newWizard(viewOf(), tt.adm, tt.in, tt.opts, tt.given)
			err := w.run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || cli.Code(err) != tt.code {
				t.Errorf("run = %v (code %d), want %q with code %d\n%s", err, cli.Code(err), tt.wantErr, tt.code, out)
			}
			if len(tt.adm.created) != 0 {
				t.Errorf("created %v", tt.adm.created)
			}
		})
	}
}

func TestInitNonInteractiveTakesFlagsAndDefaults(t *testing.T) {
	adm := &fakeAdmission{}
	w, out := newWizard(kubefake.NewClientset(), adm, "", initOptions{nonInteractive: true, yes: true},
		answers{qNamespace: "ns", qName: "auto", qMode: "automatic", qZones: "z1,z2"})
	if err := w.run(context.Background()); err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(adm.created) != 1 || adm.checks != 2 {
		t.Fatalf("%d created after %d requests, want one dry run and one create", len(adm.created), adm.checks)
	}
	got, _ := yaml.Marshal(adm.created[0])
	for _, want := range []string{"mode: automatic", "minNodes: 1", "maxNodes: 1", "name: z2"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("created cluster lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "nodes: ") || strings.Contains(string(got), "storageClassName") {
		t.Errorf("automatic mode without a default StorageClass sets no nodes and no class:\n%s", got)
	}
	if strings.Contains(out.String(), "?") {
		t.Errorf("--non-interactive --yes asked something:\n%s", out)
	}
}

func TestInitNotesWhatAdmissionCannotCheck(t *testing.T) {
	kc := viewOf()
	w, out := newWizard(kc, &fakeAdmission{}, "", initOptions{}, nil)
	w.view = observe(context.Background(), kc, operatorLookup{namespace: defaultOperatorNamespace, anyNamespace: true})
	w.notice(context.Background(), qStorageClass, answers{qStorageClass: "nope"})
	w.notice(context.Background(), qStorageClass, answers{qStorageClass: "slow"})
	w.notice(context.Background(), qCASecret, answers{qCASecret: "ca", qNamespace: "ns"})
	w.notice(context.Background(), qCASecret, answers{qCASecret: "-", qNamespace: "ns"})
	want := "  note: there is no StorageClass \"nope\" (yet); the brick claims wait for it\n" +
		"  note: there is no Secret ns/ca (yet); the cluster waits for it\n"
	if out.String() != want {
		t.Errorf("notes\n%s\nwant\n%s", out, want)
	}
}

func TestObserveSaysWhatItCannotRead(t *testing.T) {
	kc := kubefake.NewClientset()
	kc.PrependReactor("list", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: action.GetResource().Resource}, "", errors.New("denied"))
	})
	v := observe(context.Background(), kc, operatorLookup{namespace: defaultOperatorNamespace, anyNamespace: true})
	var b bytes.Buffer
	v.describe(&b)
	for _, want := range []string{
		"Kubernetes nodes: 0; zones: none labelled topology.kubernetes.io/zone\n",
		"StorageClasses: none\n",
		"anthill operator: unknown (cannot list Deployments in namespace anthill-system",
		"note: cannot list nodes (no zone default)",
		"note: cannot list StorageClasses",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("description lacks %q:\n%s", want, b.String())
		}
	}
}

func TestSmallHelpers(t *testing.T) {
	for in, want := range map[string]string{"quay.io/a/b:v1": "v1", "localhost:5000/a": "unknown version", "a@sha256:00": "unknown version", "a:v2@sha256:00": "v2"} {
		if got := imageTag(in); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", in, got, want)
		}
	}
	for d, want := range map[time.Duration]string{30 * time.Minute: "30m", time.Hour: "1h", 90 * time.Second: "1m30s", 2*time.Hour + 5*time.Minute: "2h5m", 45 * time.Second: "45s"} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
	a, err := sampleDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if a[qName] != "gluster" || a[qCapacity] != "100Gi" || a[qDowntime] != "30m" || a[qHealTimeout] != "1h" || a[qPerZone] != "true" || a[qDrivers] != "file" {
		t.Errorf("sample defaults %v", a)
	}
	for in, want := range map[string]any{"yes": true, "False": false, "2": "2"} {
		if got := boolean(in); got != want {
			t.Errorf("boolean(%q) = %v", in, got)
		}
	}
}

func TestPromptStopsWaitingWhenInterrupted(t *testing.T) {
	in, typed := io.Pipe()
	defer typed.Close()
	var out bytes.Buffer
	p := newPrompter(in, &out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.ask(ctx, "Name", "x"); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("ask after Ctrl-C = %v, want interrupted", err)
	}
	if _, err := p.confirm(ctx, "Go?"); !errors.Is(err, context.Canceled) {
		t.Errorf("confirm after Ctrl-C = %v, want interrupted", err)
	}
	if out.String() != "Name [x]: \nGo? [y/N]: \n" {
		t.Errorf("prompts %q", out.String())
	}
}
