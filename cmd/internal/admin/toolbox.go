package admin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// glustercli is GD2's own command line, in the GD2 image beside glusterd2.
// Its flags (glustercli --help): --endpoints the REST API's URL, --user
// the JWT issuer GD2 knows (glustercli), --secret-file the shared secret,
// --cacert the CA that signed GD2's serving certificate.
const (
	glustercliCommand = "glustercli"
	glustercliUser    = "glustercli"
)

// toolboxInvocation is what the toolbox runs: kubectl exec into the node's
// pod, the GD2 container, running glustercli with the cluster's
// credentials as the pod mounts them.
type toolboxInvocation struct {
	namespace, pod, container string
	// glustercli is glustercli's command line, credentials first.
	glustercli []string
}

// kubectlArgs is kubectl's command line for the invocation: the
// connection flags given (conn), then exec with stdin, a terminal when
// tty, the namespace, pod and container.
func (t toolboxInvocation) kubectlArgs(conn []string, tty bool) []string {
	args := append([]string(nil), conn...)
	args = append(args, "exec", "-i")
	if tty {
		args = append(args, "-t")
	}
	args = append(args, "-n", t.namespace, t.pod, "-c", t.container, "--")
	return append(args, t.glustercli...)
}

// toolboxFor is the invocation for node n of cluster c with glustercli's
// extra arguments; it refuses a node that is not Online, whose GD2 is not
// a peer that answers. The credentials' paths are where the node's pod,
// as the operator builds it (objects.NodeStatefulSet), mounts the auth
// Secret and the node's TLS Secret.
func toolboxFor(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode, extra []string) (toolboxInvocation, error) {
	if state := n.Status.State; state != string(states.NodeOnline) {
		if state == "" {
			state = "not yet reported"
		}
		return toolboxInvocation{}, fmt.Errorf("GlusterNode %s/%s is %s, not %s: the toolbox opens GD2's CLI only on an Online node, whose GD2 is a peer that answers (see %s)",
			n.Namespace, n.Name, state, states.NodeOnline, "explain glusternode/"+n.Name)
	}
	sts := objects.NodeStatefulSet(c, n, n.Status.Version)
	pod := sts.Spec.Template.Spec
	var ctr *corev1.Container
	for i := range pod.Containers {
		if pod.Containers[i].Name == objects.ContainerGD2 {
			ctr = &pod.Containers[i]
		}
	}
	if ctr == nil {
		return toolboxInvocation{}, fmt.Errorf("the node's pod template has no %s container", objects.ContainerGD2)
	}
	authName, authKey := objects.AuthSecretRef(c)
	secretFile, caFile := "", ""
	for _, v := range pod.Volumes {
		s := v.Secret
		if s == nil {
			continue
		}
		for _, m := range ctr.VolumeMounts {
			if m.Name != v.Name {
				continue
			}
			switch {
			case s.SecretName == authName:
				for _, item := range s.Items {
					if item.Key == authKey {
						secretFile = m.MountPath
						if m.SubPath == "" {
							secretFile += "/" + item.Path
						}
					}
				}
			case s.SecretName == objects.NodeTLSSecretName(n.Name):
				caFile = m.MountPath + "/" + objects.TLSCAKey
			}
		}
	}
	if secretFile == "" {
		return toolboxInvocation{}, fmt.Errorf("the node's pod template does not mount the auth Secret %s", authName)
	}
	// GD2 binds only the address its client address names, the pod's
	// stable DNS name (GD2_CLIENTADDRESS), not localhost; its certificate
	// names the same, so glustercli goes through that name, with or
	// without TLS.
	scheme := "http"
	if objects.TLSEnabled(c) {
		scheme = "https"
	}
	endpoint := fmt.Sprintf("%s://%s:%d", scheme, objects.NodePodHost(n.Namespace, c.Name, n.Name), objects.GD2ClientPort)
	cliArgs := []string{glustercliCommand, "--endpoints", endpoint, "--user", glustercliUser, "--secret-file", secretFile}
	if objects.TLSEnabled(c) {
		if caFile == "" {
			return toolboxInvocation{}, fmt.Errorf("the cluster has TLS but the node's pod template does not mount its TLS Secret %s", objects.NodeTLSSecretName(n.Name))
		}
		cliArgs = append(cliArgs, "--cacert", caFile)
	}
	return toolboxInvocation{
		namespace: n.Namespace, pod: objects.NodePodName(n.Name), container: objects.ContainerGD2,
		glustercli: append(cliArgs, extra...),
	}, nil
}

// secretFlags are the connection flags whose values are credentials: the
// printed command leaves them out rather than put them on a screen.
var secretFlags = map[string]bool{"token": true, "password": true}

// connectionArgs are the kubectl connection flags given on the command
// line, as kubectl takes them, but the namespace (the command names the
// node's). redact replaces credentials' values.
func connectionArgs(cmd *cobra.Command, redact bool) (args []string, redacted bool) {
	kube := pflag.NewFlagSet("kube", pflag.ContinueOnError)
	newKubeFlags().config.AddFlags(kube)
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if kube.Lookup(f.Name) == nil || f.Name == "namespace" {
			return
		}
		v := f.Value.String()
		if redact && secretFlags[f.Name] {
			v, redacted = "REDACTED", true
		}
		args = append(args, "--"+f.Name+"="+v)
	})
	return args, redacted
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// isTerminal reports whether r is a character device, as a terminal is.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (r *root) toolboxCommand() *cobra.Command {
	var printOnly bool
	cmd := &cobra.Command{
		Use:   "toolbox NODE [-- GLUSTERCLI-ARGS...]",
		Short: "run GD2's own CLI (glustercli) in an Online node's pod, with the cluster's credentials",
		Long: "Runs glustercli, GD2's own command line, in the GD2 container of the GlusterNode\n" +
			"NODE's pod, through kubectl exec, with the cluster's credentials as the pod\n" +
			"mounts them: the REST auth secret (--secret-file) and, when the cluster has\n" +
			"TLS, the CA bundle (--cacert) and the pod's DNS name as the endpoint. The\n" +
			"arguments after -- are glustercli's (without any, it lists its commands).\n" +
			"Refused for a node that is not Online. --print prints the kubectl command\n" +
			"instead of running it; so does a machine without kubectl on its PATH.\n" +
			"Credentials given as connection flags (--token, --password) are not printed.",
		Example: "  " + r.name + " toolbox gluster-zone-1-abcde -n gluster -- peer list\n" +
			"  " + r.name + " toolbox gluster-zone-1-abcde -n gluster -- volume status\n" +
			"  " + r.name + " toolbox gluster-zone-1-abcde -n gluster --print",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.UsageError(errors.New("missing NODE"))
			}
			return nil
		},
		ValidArgsFunction: r.completeNodes,
	}
	cmd.Flags().BoolVar(&printOnly, "print", false, "print the kubectl command instead of running it")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		_, ac, ns, err := r.kube.clients()
		if err != nil {
			return err
		}
		n, err := ac.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, args[0], metav1.GetOptions{})
		if err != nil {
			return notFound(err, kindGlusterNode, ns, args[0])
		}
		c, err := ac.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, n.Spec.Cluster, metav1.GetOptions{})
		if err != nil {
			return notFound(err, kindGlusterCluster, ns, n.Spec.Cluster)
		}
		inv, err := toolboxFor(c, n, args[1:])
		if err != nil {
			return err
		}
		kubectl, lookErr := exec.LookPath("kubectl")
		if printOnly || lookErr != nil {
			conn, redacted := connectionArgs(cmd, true)
			fmt.Fprintln(r.out(), shellLine(append([]string{"kubectl"}, inv.kubectlArgs(conn, true)...)))
			if redacted {
				fmt.Fprintln(r.streams.ErrOut, "note: the credentials given as --token or --password are REDACTED above; put them back to run it")
			}
			if printOnly {
				return nil
			}
			return fmt.Errorf("cannot run kubectl (%v); the command above opens the toolbox", lookErr)
		}
		conn, _ := connectionArgs(cmd, false)
		run := exec.Command(kubectl, inv.kubectlArgs(conn, isTerminal(r.streams.In))...)
		run.Stdin, run.Stdout, run.Stderr = r.streams.In, r.streams.Out, r.streams.ErrOut
		err = run.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return &cli.ExitError{Code: exit.ExitCode(), Err: fmt.Errorf("kubectl exec into %s/%s exited with %d", inv.namespace, inv.pod, exit.ExitCode())}
		}
		if err != nil {
			return fmt.Errorf("run kubectl: %w", err)
		}
		return nil
	}
	return cmd
}
