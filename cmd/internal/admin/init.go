package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/manifests"
)

// glusterClusters is the resource init creates.
var glusterClusters = schema.GroupVersionResource{Group: operatorv1alpha1.SchemeGroupVersion.Group, Version: operatorv1alpha1.SchemeGroupVersion.Version, Resource: "glusterclusters"}

// The labels of the operator's Deployment (manifests/operator), by which
// init finds the installed operator and its version.
const operatorSelector = "app.kubernetes.io/name=anthill,app.kubernetes.io/component=operator"

// defaultClassAnnotation marks the default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// initOptions are init's own flags besides the answers.
type initOptions struct {
	nonInteractive, print, yes bool
	output                     string
}

func (r *root) initCommand() *cobra.Command {
	var opts initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "create a GlusterCluster, asking for its shape (guided install)",
		Long: "Asks for a new GlusterCluster's name, namespace, mode, zones, storage, version,\n" +
			"TLS and policies, offering defaults from what the cluster shows (node zones,\n" +
			"StorageClasses, the installed operator). The API server checks every answer\n" +
			"with a dry-run create against the GlusterCluster CRD; a rejected answer is\n" +
			"asked again with admission's message. Then it prints the cluster (--print,\n" +
			"-o yaml) or, after a confirmation unless --yes, creates it.\n\n" +
			"With --non-interactive every answer is its flag (the question's default when\n" +
			"not given) and an answer admission rejects fails with its message. A flag\n" +
			"given without --non-interactive is the default its question offers. An\n" +
			"answer of - leaves an optional field unset.",
		Args: exactArgs(),
	}
	flags := map[string]*string{}
	for _, q := range initQuestions {
		if q.key == qNamespace {
			continue // kubectl's -n/--namespace
		}
		flags[q.key] = cmd.Flags().String(q.key, "", q.usage)
	}
	_ = cmd.RegisterFlagCompletionFunc(qMode, cobra.FixedCompletions(clusterModes, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVar(&opts.nonInteractive, "non-interactive", false, "ask nothing: every answer from its flag or default")
	cmd.Flags().BoolVar(&opts.print, "print", false, "print the GlusterCluster as YAML instead of creating it")
	cmd.Flags().BoolVarP(&opts.yes, "yes", "y", false, "create the cluster without asking for confirmation")
	output := outputFlag(cmd, outputJSON, outputYAML)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		opts.output = *output
		if opts.print && opts.output == "" {
			opts.output = outputYAML
		}
		if opts.output != "" && opts.yes {
			return cli.UsageError(errors.New("--yes creates the cluster; --print and -o only print it"))
		}
		if opts.nonInteractive && opts.output == "" && !opts.yes {
			return cli.UsageError(errors.New("--non-interactive needs --yes to create the cluster, or --print or -o to print it"))
		}
		given := answers{}
		cmd.Flags().Visit(func(f *pflag.Flag) {
			if p, ok := flags[f.Name]; ok {
				given[f.Name] = *p
			}
		})
		rc, ns, err := r.kube.restConfig()
		if err != nil {
			return err
		}
		kc, _, err := newClients(rc)
		if err != nil {
			return err
		}
		dyn, err := dynamic.NewForConfig(rc)
		if err != nil {
			return fmt.Errorf("dynamic client: %w", err)
		}
		if r.kube.namespaceSet() || opts.nonInteractive {
			given[qNamespace] = ns
		}
		w := &initWizard{
			kc: kc, creator: dynamicCreator{dyn}, given: given, namespace: ns, opts: opts, prog: r.name,
			operator: operatorLookup{namespace: r.operatorNamespace, anyNamespace: !r.operatorNamespaceSet},
			p:        newPrompter(r.streams.In, r.out()), out: r.out(), errOut: r.streams.ErrOut,
		}
		return w.run(cmd.Context())
	}
	return cmd
}

// sampleDefaults are the answers the shipped sample cluster
// (manifests/samples/glustercluster.yaml) gives.
func sampleDefaults() (answers, error) {
	raw, err := fs.ReadFile(manifests.Samples, "samples/glustercluster.yaml")
	if err != nil {
		return nil, err
	}
	var c operatorv1alpha1.GlusterCluster
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return nil, fmt.Errorf("decode the sample cluster: %w", err)
	}
	a := answers{qName: c.Name, qMode: string(c.Spec.Mode), qMinNodesPerZone: "1"}
	if len(c.Spec.NodeTemplates) > 0 {
		t := c.Spec.NodeTemplates[0]
		if t.Nodes != nil {
			a[qNodesPerZone] = strconv.Itoa(int(*t.Nodes))
		}
		a[qCapacity] = t.Storage.Capacity.String()
		a[qDeviceCount] = strconv.Itoa(int(max(t.Storage.DeviceCount, 1)))
	}
	if g := c.Spec.Gluster; g != nil {
		a[qImage], a[qVersion] = g.Image, g.Version
	}
	var drivers []string
	for _, d := range c.Spec.Drivers {
		drivers = append(drivers, string(d))
	}
	a[qDrivers] = strings.Join(drivers, ",")
	if f := c.Spec.FailurePolicy; f != nil && f.PermissibleDowntime != nil {
		a[qDowntime] = shortDuration(f.PermissibleDowntime.Duration)
	}
	if u := c.Spec.UpgradePolicy; u != nil {
		a[qMaxParallel], a[qPerZone] = strconv.Itoa(int(u.MaxParallel)), strconv.FormatBool(u.PerZone)
		if u.HealTimeout != nil {
			a[qHealTimeout] = shortDuration(u.HealTimeout.Duration)
		}
	}
	return a, nil
}

// shortDuration writes d as people do: 30m rather than 30m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// initWizard asks init's questions and creates or prints the cluster.
type initWizard struct {
	kc      kubernetes.Interface
	creator clusterCreator
	// given are the answers from flags; namespace the one the
	// connection flags select.
	given     answers
	namespace string
	opts      initOptions
	prog      string
	p         *prompter
	out       io.Writer
	errOut    io.Writer

	// operator says where to look for the operator.
	operator operatorLookup
	view     clusterView
	sample   answers
	// accepted are the answers admission took: asked again (after a
	// later answer sent the interview back), a question offers its own.
	accepted answers
}

// defaultFor is the answer question key offers, given the answers so
// far: the answer admission already took, else its flag, else what the
// cluster shows, else the sample's.
func (w *initWizard) defaultFor(key string, a answers) string {
	if v, ok := w.accepted[key]; ok {
		return v
	}
	if v, ok := w.given[key]; ok {
		return v
	}
	switch key {
	case qNamespace:
		return w.namespace
	case qZones:
		return strings.Join(w.view.zones(), ",")
	case qMaxNodesPerZone:
		fewest := 0
		for _, z := range splitList(a[qZones]) {
			if n := w.view.nodesInZone[z]; fewest == 0 || n < fewest {
				fewest = n
			}
		}
		return strconv.Itoa(max(fewest, 1))
	case qStorageClass:
		return w.view.defaultClass
	}
	return w.sample[key]
}

func (w *initWizard) run(ctx context.Context) error {
	var err error
	if w.sample, err = sampleDefaults(); err != nil {
		return err
	}
	w.view = observe(ctx, w.kc, w.operator)
	var a answers
	if w.opts.nonInteractive {
		a, err = w.fromFlags(ctx)
	} else {
		a, err = w.interview(ctx)
	}
	if err != nil {
		return err
	}
	obj := clusterObject(a)
	ns, name := a[qNamespace], a[qName]
	if w.opts.output != "" {
		return printDoc(w.out, w.opts.output, obj)
	}
	if !w.opts.yes {
		fmt.Fprintln(w.out, "\nGlusterCluster to create:")
		if err := printDoc(w.out, outputYAML, obj); err != nil {
			return err
		}
		ok, err := w.p.confirm(ctx, fmt.Sprintf("Create GlusterCluster %s/%s?", ns, name))
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("not confirmed; nothing created")
		}
	}
	if err := w.creator.createCluster(ctx, ns, obj, false); err != nil {
		return fmt.Errorf("create GlusterCluster %s/%s: %w", ns, name, err)
	}
	fmt.Fprintf(w.out, "GlusterCluster %s/%s created\nfollow it with: %s status %s -n %s\n", ns, name, w.prog, name, ns)
	return nil
}

// check is admission's verdict on the answers: its problems, or an error
// when there is no verdict.
func (w *initWizard) check(ctx context.Context, a answers) ([]problem, error) {
	err := w.creator.createCluster(ctx, a[qNamespace], clusterObject(a), true)
	if err == nil {
		return nil, nil
	}
	ps, ok := problemsOf(err)
	if !ok {
		return nil, fmt.Errorf("dry-run create of the GlusterCluster: %w", err)
	}
	return ps, nil
}

// fromFlags takes every answer from its flag or default and fails on the
// first verdict against them, naming the flags.
func (w *initWizard) fromFlags(ctx context.Context) (answers, error) {
	a := answers{}
	for _, q := range initQuestions {
		if q.applies == nil || q.applies(a) {
			a[q.key] = w.defaultFor(q.key, a)
		}
	}
	for _, q := range initQuestions {
		if _, ok := w.given[q.key]; ok && q.key != qNamespace && q.applies != nil && !q.applies(a) {
			return nil, cli.UsageError(fmt.Errorf("--%s does not apply in mode %s", q.key, a.mode()))
		}
	}
	ps, err := w.check(ctx, a)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return a, nil
	}
	texts := make([]string, 0, len(ps))
	for _, p := range ps {
		switch p.question {
		case "":
			texts = append(texts, p.text)
		case qNamespace:
			texts = append(texts, fmt.Sprintf("-n %s: %s", a[qNamespace], p.text))
		default:
			texts = append(texts, fmt.Sprintf("--%s=%s: %s", p.question, a[p.question], p.text))
		}
	}
	return nil, errors.New(strings.Join(texts, "; "))
}

// interview asks the questions in order, checking the answers after each
// one. A problem with the answer just given asks it again; one with an
// earlier answer (a later answer can make an earlier one wrong) goes back
// to that question; a new problem no question's field explains is the
// last answer's. Problems of questions not asked yet wait for them.
func (w *initWizard) interview(ctx context.Context) (answers, error) {
	fmt.Fprintln(w.out, "Creating a GlusterCluster. The API server checks every answer (a dry-run create);")
	fmt.Fprintln(w.out, "Enter takes the default in brackets, - leaves an optional field unset.")
	w.view.describe(w.out)
	a, asked := answers{}, map[string]bool{}
	w.accepted = answers{}
	var settled []problem // the verdict when the last question passed
	for i := 0; i < len(initQuestions); {
		q := initQuestions[i]
		if q.applies != nil && !q.applies(a) {
			delete(a, q.key)
			delete(asked, q.key)
			i++
			continue
		}
		ans, err := w.p.ask(ctx, q.prompt, w.defaultFor(q.key, a))
		if errors.Is(err, errNoAnswer) {
			return nil, fmt.Errorf("no answer to %q (end of input); nothing created", q.prompt)
		}
		if err != nil {
			return nil, err
		}
		a[q.key], asked[q.key] = ans, true
		ps, err := w.check(ctx, a)
		if err != nil {
			return nil, err
		}
		var mine []problem
		back := -1
		for _, p := range ps {
			switch {
			case p.question == q.key, p.question == "" && !slices.Contains(settled, p):
				mine = append(mine, p)
			case p.question != "" && asked[p.question]:
				if j := questionIndex(p.question); back < 0 || j < back {
					back = j
				}
				mine = append(mine, p)
			}
		}
		for _, p := range mine {
			fmt.Fprintf(w.out, "  rejected: %s\n", p.text)
		}
		switch {
		case len(mine) == 0:
			settled, w.accepted[q.key] = ps, ans
			w.notice(ctx, q.key, a)
			i++
		case back >= 0 && !slices.ContainsFunc(mine, func(p problem) bool { return p.question == q.key || p.question == "" }):
			// The answer just given is not at fault: it is offered
			// again; the one at fault is not.
			w.accepted[q.key] = ans
			delete(w.accepted, initQuestions[back].key)
			fmt.Fprintf(w.out, "  (asking %q again)\n", initQuestions[back].prompt)
			i = back
		}
	}
	ps, err := w.check(ctx, a)
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		texts := make([]string, 0, len(ps))
		for _, p := range ps {
			texts = append(texts, p.text)
		}
		return nil, fmt.Errorf("the API server rejects the cluster for a reason no answer explains: %s", strings.Join(texts, "; "))
	}
	return a, nil
}

// notice says what admission cannot: a StorageClass, CA Secret or GD2
// auth Secret named that does not exist (yet).
func (w *initWizard) notice(ctx context.Context, key string, a answers) {
	v, ok := a.set(key)
	if !ok {
		return
	}
	switch key {
	case qStorageClass:
		if w.view.classes != nil && !slices.Contains(w.view.classes, v) {
			fmt.Fprintf(w.out, "  note: there is no StorageClass %q (yet); the brick claims wait for it\n", v)
		}
	case qCASecret, qMgmtSecret:
		if _, err := w.kc.CoreV1().Secrets(a[qNamespace]).Get(ctx, v, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			fmt.Fprintf(w.out, "  note: there is no Secret %s/%s (yet); the cluster waits for it\n", a[qNamespace], v)
		}
	}
}
