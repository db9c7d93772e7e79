package admin

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig whose current context has namespace
// ns (none when empty) and returns its path.
func writeKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: ns}
	cfg.CurrentContext = "ctx"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("write kubeconfig: %v", err)
	}
	return path
}

func TestKubeFlagsResolveLikeKubectl(t *testing.T) {
	withNS := writeKubeconfig(t, "from-context")
	withoutNS := writeKubeconfig(t, "")
	tests := []struct {
		name       string
		env        string
		args       []string
		wantNS     string
		wantErrHas string
	}{
		{name: "the context's namespace", args: []string{"--kubeconfig", withNS}, wantNS: "from-context"},
		{name: "-n wins over the context", args: []string{"--kubeconfig", withNS, "-n", "mine"}, wantNS: "mine"},
		{name: "--namespace is the long form", args: []string{"--kubeconfig=" + withNS, "--namespace=mine"}, wantNS: "mine"},
		{name: "a context without namespace means default", args: []string{"--kubeconfig", withoutNS}, wantNS: "default"},
		{name: "$KUBECONFIG when no flag", env: withNS, wantNS: "from-context"},
		{name: "a missing --kubeconfig file is named", args: []string{"--kubeconfig", filepath.Join(t.TempDir(), "nope")}, wantErrHas: "--kubeconfig"},
		{name: "nothing at all, outside a cluster", env: filepath.Join(t.TempDir(), "nope"), wantErrHas: "pass --kubeconfig or set KUBECONFIG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			t.Setenv("HOME", t.TempDir()) // no ~/.kube/config to fall back on
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			kf := newKubeFlags()
			kf.config.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatalf("parse: %v", err)
			}
			_, _, ns, err := kf.clients()
			if tt.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) {
					t.Fatalf("clients() = %v, want an error containing %q", err, tt.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("clients(): %v", err)
			}
			if ns != tt.wantNS {
				t.Errorf("namespace = %q, want %q", ns, tt.wantNS)
			}
		})
	}
}
