package admin

import (
	"slices"
	"strings"
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

func TestToolboxRunsGlustercliWithTheClustersCredentials(t *testing.T) {
	n := glusterNode("gluster", "gluster-zone-1-abcde", "gluster")
	n.Status.State = "Online"
	c := glusterCluster("gluster", "gluster", "zone-1")

	// GD2 binds only its client address, the pod's DNS name: glustercli
	// goes there, not to localhost, where nothing listens.
	inv, err := toolboxFor(c, n, []string{"volume", "status"})
	if err != nil {
		t.Fatal(err)
	}
	got := shellLine(append([]string{"kubectl"}, inv.kubectlArgs([]string{"--context=prod"}, true)...))
	want := "kubectl --context=prod exec -i -t -n gluster gluster-zone-1-abcde-0 -c glusterd2 -- " +
		"glustercli --endpoints http://gluster-zone-1-abcde-0.gluster-nodes.gluster.svc:24007 --user glustercli --secret-file /var/lib/glusterd2/auth volume status"
	if got != want {
		t.Errorf("without TLS:\n%s\nwant\n%s", got, want)
	}

	// With TLS, glustercli trusts the node's CA bundle and reaches GD2 by
	// the pod's DNS name, which its certificate names.
	c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca"}
	inv, err = toolboxFor(c, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := inv.kubectlArgs(nil, false)
	if slices.Contains(args, "-t") {
		t.Errorf("a terminal was asked for without one: %q", args)
	}
	got = strings.Join(inv.glustercli, " ")
	want = "glustercli --endpoints https://gluster-zone-1-abcde-0.gluster-nodes.gluster.svc:24007 --user glustercli --secret-file /var/lib/glusterd2/auth --cacert /etc/glusterd2/tls/ca.crt"
	if got != want {
		t.Errorf("with TLS:\n%s\nwant\n%s", got, want)
	}
}

func TestToolboxRefusesANodeThatIsNotOnline(t *testing.T) {
	c := glusterCluster("gluster", "gluster", "zone-1")
	for _, state := range []string{"", "Joining", "Maintenance", "Offline", "Draining", "Failed"} {
		n := glusterNode("gluster", "n1", "gluster")
		n.Status.State = state
		_, err := toolboxFor(c, n, nil)
		if err == nil || !strings.Contains(err.Error(), "not Online: the toolbox opens GD2's CLI only on an Online node") {
			t.Errorf("state %q: err = %v, want a refusal", state, err)
		}
	}
}

func TestShellQuoteQuotesWhatAShellWouldSplit(t *testing.T) {
	for in, want := range map[string]string{
		"volume": "volume", "--endpoints=https://h:24007": "--endpoints=https://h:24007", "": "''",
		"a b": "'a b'", "it's": `'it'\''s'`, "$HOME": "'$HOME'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestIsTerminalIsFalseForAPipe(t *testing.T) {
	if isTerminal(strings.NewReader("")) {
		t.Error("a reader is no terminal")
	}
}
