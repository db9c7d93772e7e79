package main

import (
	"flag"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
)

// kubeFlags are the connection flags every admin subcommand shares. They
// resolve exactly as kubectl's do, so an admin's habits carry over: an
// explicit --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else the
// in-cluster service account; the namespace from -n, else the current
// context's, else the pod's, else "default".
type kubeFlags struct {
	kubeconfig string
	namespace  string
}

// register adds --kubeconfig and -n/--namespace to fs.
func (k *kubeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then in-cluster configuration")
	const nsUsage = "namespace; default the kubeconfig context's namespace, else \"default\""
	fs.StringVar(&k.namespace, "namespace", "", nsUsage)
	fs.StringVar(&k.namespace, "n", "", "shorthand for --namespace")
}

func (k *kubeFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	overrides := &clientcmd.ConfigOverrides{}
	if k.namespace != "" {
		overrides.Context.Namespace = k.namespace
	}
	// The deferred loader falls back to the in-cluster configuration when
	// no kubeconfig file is found, as kubectl does.
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// clients returns the core and anthill clientsets and the namespace to
// act in.
func (k *kubeFlags) clients() (kubernetes.Interface, versioned.Interface, string, error) {
	cc := k.clientConfig()
	rc, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, nil, "", fmt.Errorf("no kubeconfig found and not running in a cluster: pass --kubeconfig or set KUBECONFIG")
		}
		return nil, nil, "", fmt.Errorf("load kubeconfig (--kubeconfig %q): %w", k.kubeconfig, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, nil, "", fmt.Errorf("resolve namespace (pass -n): %w", err)
	}
	kc, ac, err := newClients(rc)
	if err != nil {
		return nil, nil, "", err
	}
	return kc, ac, ns, nil
}

func newClients(rc *rest.Config) (kubernetes.Interface, versioned.Interface, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "anthill-cli/" + cli.Version
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	ac, err := versioned.NewForConfig(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("anthill client: %w", err)
	}
	return kc, ac, nil
}

// parseInterspersed parses args with fs, letting flags come before or after
// the positional arguments (`anthill node maintenance NAME -n NS` reads as
// naturally as `anthill node -n NS maintenance NAME`), and returns the
// positional arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// The flag package stops at "--"; everything after it is positional.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
