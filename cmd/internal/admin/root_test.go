package admin

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gluster/anthill/cmd/internal/cli"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/objects"
)

// execute runs the command tree as kubectl gluster with args and returns
// its stdout, stderr and exit code.
func execute(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return executeWithInput(t, "", args...)
}

func executeWithInput(t *testing.T, in string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), PluginName, args, genericiooptions.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// TestFlagsParseAsKubectlParsesThem parses each command's command line
// without running it and checks where every flag lands: kubectl's
// connection flags anywhere on the line, in every spelling kubectl
// accepts, and each command's own flags.
func TestFlagsParseAsKubectlParsesThem(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		command string
		want    map[string]string
		args0   []string
	}{
		{
			name: "connection flags before the command", args: []string{"--context", "prod", "--cluster=c2", "--user", "admin", "-n", "gluster", "status", "gluster"},
			command: "status", want: map[string]string{"context": "prod", "cluster": "c2", "user": "admin", "namespace": "gluster"}, args0: []string{"gluster"},
		},
		{
			name: "connection flags after the arguments", args: []string{"status", "gluster", "--namespace=gluster", "--kubeconfig", "/k", "--request-timeout", "5s", "-o", "json"},
			command: "status", want: map[string]string{"namespace": "gluster", "kubeconfig": "/k", "request-timeout": "5s", "output": "json"}, args0: []string{"gluster"},
		},
		{
			name: "server, token and impersonation", args: []string{"-s", "https://api:6443", "--token", "t", "--as", "alice", "--insecure-skip-tls-verify", "version"},
			command: "version", want: map[string]string{"server": "https://api:6443", "token": "t", "as": "alice", "insecure-skip-tls-verify": "true"},
		},
		{
			name: "transitions short flags and a cluster", args: []string{"transitions", "-f", "-A", "--since=30m", "gluster", "-owide"},
			command: "transitions", want: map[string]string{"follow": "true", "all-namespaces": "true", "since": "30m0s", "output": "wide"}, args0: []string{"gluster"},
		},
		{
			name: "--cluster is kubectl's, not a GlusterCluster", args: []string{"transitions", "--cluster", "kind-c"},
			command: "transitions", want: map[string]string{"cluster": "kind-c", "follow": "false"},
		},
		{
			name: "decommission with --yes, --wait and --timeout", args: []string{"node", "decommission", "n1", "-y", "--wait", "--timeout=2m", "-n", "g"},
			command: "decommission", want: map[string]string{"yes": "true", "wait": "true", "timeout": "2m0s", "namespace": "g"}, args0: []string{"n1"},
		},
		{
			name: "maintenance -o yaml", args: []string{"node", "maintenance", "-o", "yaml", "n2"},
			command: "maintenance", want: map[string]string{"output": "yaml", "wait": "false"}, args0: []string{"n2"},
		},
		{
			name: "status --history", args: []string{"status", "--history", "3", "c"},
			command: "status", want: map[string]string{"history": "3"}, args0: []string{"c"},
		},
		{
			name: "init answers as flags", args: []string{"init", "--name", "g", "--zones=a,b", "--nodes-per-zone", "2", "--storage-class", "fast", "--capacity=1Ti", "-n", "gluster"},
			command: "init", want: map[string]string{"name": "g", "zones": "a,b", "nodes-per-zone": "2", "storage-class": "fast", "capacity": "1Ti", "namespace": "gluster", "non-interactive": "false"},
		},
		{
			name: "init --non-interactive with every other answer", args: []string{"init", "--non-interactive", "-y", "--mode", "automatic", "--min-nodes-per-zone=1", "--max-nodes-per-zone=4",
				"--device-count", "2", "--image", "img", "--version", "4.1.0", "--drivers", "file,block", "--ca-secret", "ca", "--permissible-downtime", "1h",
				"--offline-grace", "1m", "--max-parallel", "2", "--per-zone", "false", "--heal-timeout", "2h"},
			command: "init", want: map[string]string{"non-interactive": "true", "yes": "true", "mode": "automatic", "min-nodes-per-zone": "1", "max-nodes-per-zone": "4",
				"device-count": "2", "image": "img", "version": "4.1.0", "drivers": "file,block", "ca-secret": "ca", "permissible-downtime": "1h",
				"offline-grace": "1m", "max-parallel": "2", "per-zone": "false", "heal-timeout": "2h", "print": "false"},
		},
		{
			name: "init an external pool, printed", args: []string{"init", "--mode=external", "--external-nodes", "a.example.com,b.example.com", "--print", "-o", "json"},
			command: "init", want: map[string]string{"mode": "external", "external-nodes": "a.example.com,b.example.com", "print": "true", "output": "json"},
		},
		{
			name: "delete with --yes, --wait and --timeout", args: []string{"delete", "gc", "-y", "--wait", "--timeout=5m", "-n", "g"},
			command: "delete", want: map[string]string{"yes": "true", "wait": "true", "timeout": "5m0s", "namespace": "g"}, args0: []string{"gc"},
		},
		{
			name: "delete defaults", args: []string{"delete", "gc"},
			command: "delete", want: map[string]string{"yes": "false", "wait": "false", "timeout": "30m0s"}, args0: []string{"gc"},
		},
		{
			name: "diagram --format", args: []string{"diagram", "node", "--format", "dot"},
			command: "diagram", want: map[string]string{"format": "dot", "write-docs": ""}, args0: []string{"node"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &root{name: PluginName, kube: newKubeFlags()}
			cmd, rest, err := r.command().Find(tt.args)
			if err != nil {
				t.Fatalf("find: %v", err)
			}
			if cmd.Name() != tt.command {
				t.Fatalf("found command %q, want %q", cmd.Name(), tt.command)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("parse: %v", err)
			}
			for flag, want := range tt.want {
				f := cmd.Flags().Lookup(flag)
				if f == nil {
					t.Fatalf("no flag --%s", flag)
				}
				if got := f.Value.String(); got != want {
					t.Errorf("--%s = %q, want %q", flag, got, want)
				}
			}
			if got := cmd.Flags().Args(); strings.Join(got, " ") != strings.Join(tt.args0, " ") {
				t.Errorf("arguments %q, want %q", got, tt.args0)
			}
		})
	}
}

// TestEveryCommandHasKubectlConnectionFlags checks the whole set kubectl
// offers is there, spelled as kubectl spells it, on every command.
func TestEveryCommandHasKubectlConnectionFlags(t *testing.T) {
	want := map[string]string{
		"kubeconfig": "", "context": "", "cluster": "", "user": "", "namespace": "n", "server": "s",
		"request-timeout": "", "token": "", "as": "", "as-group": "", "as-uid": "", "certificate-authority": "",
		"client-certificate": "", "client-key": "", "insecure-skip-tls-verify": "", "tls-server-name": "",
		"cache-dir": "", "username": "", "password": "", "disable-compression": "",
	}
	r := &root{name: PluginName, kube: newKubeFlags()}
	for _, path := range [][]string{{"status"}, {"transitions"}, {"node", "decommission"}, {"node", "maintenance"}, {"node", "resume"}, {"diagram"}, {"version"}, {"init"}, {"delete"}} {
		cmd, _, err := r.command().Find(path)
		if err != nil {
			t.Fatal(err)
		}
		flags := cmd.InheritedFlags()
		for name, short := range want {
			f := flags.Lookup(name)
			if f == nil {
				t.Errorf("%s lacks --%s", cmd.CommandPath(), name)
				continue
			}
			if f.Shorthand != short {
				t.Errorf("%s --%s has shorthand %q, want %q", cmd.CommandPath(), name, f.Shorthand, short)
			}
		}
	}
}

func TestHelpExitsZeroEverywhere(t *testing.T) {
	for _, args := range [][]string{
		nil, {"--help"}, {"-h"}, {"help"}, {"help", "status"},
		{"status", "--help"}, {"transitions", "-h"}, {"node", "--help"}, {"node", "decommission", "--help"},
		{"node", "maintenance", "-h"}, {"node", "resume", "--help"}, {"diagram", "--help"}, {"version", "--help"},
		{"init", "--help"}, {"delete", "-h"},
		{"completion", "--help"}, {"completion", "bash", "--help"},
	} {
		out, errOut, code := execute(t, args...)
		if code != 0 {
			t.Errorf("%q exited %d, want 0: %s", args, code, errOut)
		}
		if !strings.Contains(out, "kubectl gluster") {
			t.Errorf("%q help does not name kubectl gluster:\n%s", args, out)
		}
	}
}

func TestExitCodesAndOneLineErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		errHas  string
		outHas  string
		stdinIn string
	}{
		{name: "version", args: []string{"version"}, code: 0, outHas: "kubectl gluster dev"},
		{name: "version -o json", args: []string{"version", "-o", "json"}, code: 0, outHas: `"version": "dev"`},
		{name: "completion bash", args: []string{"completion", "bash"}, code: 0, outHas: "bash completion"},
		{name: "completion zsh", args: []string{"completion", "zsh"}, code: 0, outHas: "compdef"},
		{name: "completion of an unknown shell", args: []string{"completion", "bogus"}, code: cli.ExitUsage, errHas: `unknown shell "bogus"; valid shells: bash, fish, powershell, zsh`},
		{name: "completion without a shell", args: []string{"completion"}, code: cli.ExitUsage, errHas: "missing SHELL; valid shells: bash, fish, powershell, zsh"},
		{name: "version --client", args: []string{"version", "--client"}, code: 0, outHas: "kubectl gluster dev"},
		{name: "a bad jsonpath template", args: []string{"explain", "gc/x", "-o", "jsonpath={.state"}, code: cli.ExitUsage, errHas: "bad -o jsonpath template"},
		{name: "jsonpath without a template", args: []string{"status", "c", "-o", "jsonpath"}, code: cli.ExitUsage, errHas: "valid: json, yaml, wide, name, jsonpath=TEMPLATE"},
		{name: "toolbox without a node", args: []string{"toolbox"}, code: cli.ExitUsage, errHas: "missing NODE"},
		{name: "an unknown command", args: []string{"stauts"}, code: cli.ExitUsage, errHas: `unknown command "stauts"`},
		{name: "an unknown flag", args: []string{"status", "--bogus", "c"}, code: cli.ExitUsage, errHas: "unknown flag: --bogus"},
		{name: "status without a cluster", args: []string{"status"}, code: cli.ExitUsage, errHas: "missing CLUSTER"},
		{name: "status with two clusters", args: []string{"status", "a", "b"}, code: cli.ExitUsage, errHas: `unexpected arguments ["b"]`},
		{name: "an unknown output format", args: []string{"status", "c", "-o", "xml"}, code: cli.ExitUsage, errHas: `unknown output format "xml"; valid: json, yaml, wide`},
		{name: "a negative --history", args: []string{"status", "c", "--history", "-1"}, code: cli.ExitUsage, errHas: "--history must not be negative"},
		{name: "-A with -n", args: []string{"transitions", "-A", "-n", "x"}, code: cli.ExitUsage, errHas: "exclude each other"},
		{name: "a negative --since", args: []string{"transitions", "--since", "-1m"}, code: cli.ExitUsage, errHas: "--since must not be negative"},
		{name: "node without an action", args: []string{"node"}, code: cli.ExitUsage, errHas: "missing ACTION and NAME; actions: decommission, maintenance, resume"},
		{name: "node with an unknown action", args: []string{"node", "drain", "n1"}, code: cli.ExitUsage, errHas: `unknown action "drain"; valid actions: decommission, maintenance, resume`},
		{name: "node without a name", args: []string{"node", "resume"}, code: cli.ExitUsage, errHas: "missing NAME"},
		{name: "node with a bad --timeout", args: []string{"node", "resume", "n1", "--timeout", "0s"}, code: cli.ExitUsage, errHas: "--timeout must be positive"},
		{name: "wide is not an output of node", args: []string{"node", "resume", "n1", "-o", "wide"}, code: cli.ExitUsage, errHas: "valid: json, yaml"},
		{name: "init takes no argument", args: []string{"init", "gc"}, code: cli.ExitUsage, errHas: `unexpected arguments ["gc"]`},
		{name: "init --non-interactive creates only with --yes", args: []string{"init", "--non-interactive"}, code: cli.ExitUsage, errHas: "--non-interactive needs --yes"},
		{name: "init --print with --yes", args: []string{"init", "--print", "--yes"}, code: cli.ExitUsage, errHas: "--print and -o only print it"},
		{name: "init -o wide", args: []string{"init", "-o", "wide"}, code: cli.ExitUsage, errHas: "valid: json, yaml"},
		{name: "init against an unreachable API server", args: []string{"init", "--non-interactive", "--print", "-s", "https://127.0.0.1:1", "--request-timeout", "2s"}, code: cli.ExitFailure, errHas: "dry-run create of the GlusterCluster"},
		{name: "delete without a cluster", args: []string{"delete"}, code: cli.ExitUsage, errHas: "missing CLUSTER"},
		{name: "delete with a bad --timeout", args: []string{"delete", "gc", "--timeout", "-1s"}, code: cli.ExitUsage, errHas: "--timeout must be positive"},
		{name: "delete against an unreachable API server", args: []string{"delete", "gc", "-s", "https://127.0.0.1:1", "--request-timeout", "2s"}, code: cli.ExitFailure, errHas: "get GlusterCluster default/gc"},
		{name: "an unreachable API server is a failure", args: []string{"status", "c", "-s", "https://127.0.0.1:1", "--request-timeout", "2s"}, code: cli.ExitFailure, errHas: "get GlusterCluster default/c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", writeKubeconfig(t, ""))
			out, errOut, code := executeWithInput(t, tt.stdinIn, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, errOut)
			}
			if !strings.Contains(errOut, tt.errHas) || !strings.Contains(out, tt.outHas) {
				t.Errorf("stdout %q, stderr %q; want them to contain %q and %q", out, errOut, tt.outHas, tt.errHas)
			}
			if tt.code != 0 && (strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "error: ")) {
				t.Errorf("stderr %q, want one line starting with error:", errOut)
			}
		})
	}
}

func TestWaitForNodeTimesOutWithExitCode124(t *testing.T) {
	n := glusterNode("ns", "n1", "gluster")
	n.Status.State = "Online"
	ac := anthillfake.NewSimpleClientset(n)
	_, err := waitForNode(context.Background(), ac, "ns", "n1", objects.RequestMaintenance, 1500*time.Millisecond, &bytes.Buffer{})
	if cli.Code(err) != cli.ExitTimeout || !strings.Contains(err.Error(), "waiting for GlusterNode ns/n1 to be Maintenance (now Online)") {
		t.Errorf("waitForNode = %v (code %d), want a timeout naming the state, code 124", err, cli.Code(err))
	}
	n.Status.State = "Maintenance"
	ac = anthillfake.NewSimpleClientset(n)
	if _, err := waitForNode(context.Background(), ac, "ns", "n1", objects.RequestMaintenance, time.Minute, &bytes.Buffer{}); err != nil {
		t.Errorf("waitForNode of a node in Maintenance = %v", err)
	}
	ac = anthillfake.NewSimpleClientset()
	if _, err := waitForNode(context.Background(), ac, "ns", "n1", objects.RequestDecommission, time.Minute, &bytes.Buffer{}); err != nil {
		t.Errorf("waitForNode of a decommissioned node that is gone = %v", err)
	}
}

func TestConfirmTakesOnlyYes(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, "YES\n": true, " yes \n": true, "n\n": false, "\n": false, "": false, "yep\n": false, "y": true} {
		var w bytes.Buffer
		got, err := confirm(context.Background(), strings.NewReader(in), &w, "Go?")
		if err != nil || got != want {
			t.Errorf("confirm(%q) = %v, %v; want %v", in, got, err, want)
		}
		if w.String() != "Go? [y/N]: " {
			t.Errorf("prompt %q", w.String())
		}
	}
}

// TestDocsNameEveryCommandAndFlag keeps docs/cli.md complete: every
// command's heading and every flag of its own.
func TestDocsNameEveryCommandAndFlag(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if !strings.Contains(doc, "`"+c.CommandPath()) {
			t.Errorf("docs/cli.md does not name %q", c.CommandPath())
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !strings.Contains(doc, "--"+f.Name) {
				t.Errorf("docs/cli.md does not document %s --%s", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	cmd := newRoot(PluginName, genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}).command()
	cmd.InitDefaultCompletionCmd()
	walk(cmd)
	cmd.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(doc, "--"+f.Name) {
			t.Errorf("docs/cli.md does not document the connection flag --%s", f.Name)
		}
	})
}
