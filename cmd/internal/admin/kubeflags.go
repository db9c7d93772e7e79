package admin

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
)

// kubeFlags are the connection flags every admin command shares: kubectl's
// own (cli-runtime's ConfigFlags, registered as kubectl registers them), so
// an admin's habits and scripts carry over: --kubeconfig, --context,
// --cluster, --user, -n/--namespace, -s/--server, --token, --as,
// --request-timeout and the rest. They resolve as kubectl's do: an explicit
// --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else the in-cluster
// service account; the namespace from -n, else the context's, else the
// pod's, else "default".
type kubeFlags struct {
	config *genericclioptions.ConfigFlags
}

func newKubeFlags() *kubeFlags {
	return &kubeFlags{config: genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag()}
}

// namespaceSet reports whether -n/--namespace was given.
func (k *kubeFlags) namespaceSet() bool {
	return k.config.Namespace != nil && *k.config.Namespace != ""
}

func (k *kubeFlags) kubeconfigText() string {
	if k.config.KubeConfig == nil {
		return ""
	}
	return *k.config.KubeConfig
}

// restConfig is the client configuration and the namespace to act in.
func (k *kubeFlags) restConfig() (*rest.Config, string, error) {
	// kubectl would fall back on http://localhost:8080 here; naming the
	// missing configuration helps more.
	if k.noConfig() {
		return nil, "", fmt.Errorf("no kubeconfig found and not running in a cluster: pass --kubeconfig or set KUBECONFIG")
	}
	rc, err := k.config.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", fmt.Errorf("no kubeconfig found and not running in a cluster: pass --kubeconfig or set KUBECONFIG")
		}
		return nil, "", fmt.Errorf("load kubeconfig (--kubeconfig %q): %w", k.kubeconfigText(), err)
	}
	ns, _, err := k.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("resolve namespace (pass -n): %w", err)
	}
	return rc, ns, nil
}

// noConfig reports that nothing says which API server to talk to: no
// kubeconfig context, no --server, and not inside a pod.
func (k *kubeFlags) noConfig() bool {
	if k.config.APIServer != nil && *k.config.APIServer != "" {
		return false
	}
	raw, err := k.config.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Contexts) > 0 {
		return false
	}
	_, err = rest.InClusterConfig()
	return err != nil
}

// clients returns the core and anthill clientsets and the namespace to
// act in.
func (k *kubeFlags) clients() (kubernetes.Interface, versioned.Interface, string, error) {
	rc, ns, err := k.restConfig()
	if err != nil {
		return nil, nil, "", err
	}
	kc, ac, err := newClients(rc)
	if err != nil {
		return nil, nil, "", err
	}
	return kc, ac, ns, nil
}

func newClients(rc *rest.Config) (kubernetes.Interface, versioned.Interface, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "kubectl-gluster/" + cli.Version
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
