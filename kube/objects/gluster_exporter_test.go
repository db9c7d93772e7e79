package objects

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/monitoring"
)

// exporterConfig is the shape gluster-exporter decodes its TOML into
// (gluster-prometheus@0d3c2f1: gluster-exporter/conf/conf.go), with the
// TOML library and version it was built with (Gopkg.lock: v0.3.1): the
// REST fields have no TOML name and match by their own.
type exporterConfig struct {
	*ExporterGlobals `toml:"globals"`
	CollectorsConf   map[string]struct {
		Name         string `toml:"name"`
		SyncInterval uint64 `toml:"sync-interval"`
		Disabled     bool   `toml:"disabled"`
	} `toml:"collectors"`
}

type ExporterGlobals struct {
	Port        int      `toml:"port"`
	MetricsPath string   `toml:"metrics-path"`
	LogFile     string   `toml:"log-file"`
	LogLevel    string   `toml:"log-level"`
	CacheTTL    uint64   `toml:"cache-ttl-in-sec"`
	CacheFuncs  []string `toml:"cache-enabled-funcs"`
	*ExporterGConfig
}

type ExporterGConfig struct {
	GlusterMgmt     string `toml:"gluster-mgmt"`
	GlusterdWorkdir string `toml:"glusterd-dir"`
	Glusterd2User   string
	Glusterd2Secret string
	Glusterd2Cacert string
}

// The script the exporter's container runs writes a TOML that the
// exporter's own decoder reads into the fields it uses: glusterd2 at GD2's
// state directory, the port the pod declares, the REST user and the
// cluster's secret, the CA only with TLS, and the collectors that work
// from a container of their own.
func TestTheExporterScriptWritesTheTOMLTheExporterReads(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tls := range []bool{false, true} {
		dir := t.TempDir()
		file := filepath.Join(dir, "gluster-exporter.toml")
		script := strings.ReplaceAll(glusterExporterScript, glusterExporterConfig, file)
		// The exporter itself is not on this machine: the last line
		// prints the file instead of running it on the file.
		script = strings.Replace(script, "exec "+glusterExporterBinary+" --config=", "exec cat ", 1)
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = []string{envExporterSecret + "=" + secret, envExporterTLS + "=" + map[bool]string{false: "false", true: "true"}[tls]}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tls %v: the script failed: %v\n%s", tls, err, out)
		}
		if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("tls %v: the TOML holding the secret: %v, %v; want mode 0600", tls, st, err)
		}
		var c exporterConfig
		md, err := toml.Decode(string(out), &c)
		if err != nil {
			t.Fatalf("tls %v: the exporter's decoder refuses the TOML: %v\n%s", tls, err, out)
		}
		if u := md.Undecoded(); len(u) > 0 {
			t.Errorf("tls %v: keys the exporter does not read: %v", tls, u)
		}
		g := c.ExporterGlobals
		if g == nil || g.ExporterGConfig == nil {
			t.Fatalf("tls %v: no [globals]:\n%s", tls, out)
		}
		if g.GlusterMgmt != "glusterd2" || g.GlusterdWorkdir != GD2StateDir || g.Port != GlusterExporterPort || g.MetricsPath != "/metrics" || g.LogFile != "stderr" {
			t.Errorf("tls %v: globals %+v %+v", tls, *g, *g.ExporterGConfig)
		}
		if g.Glusterd2User != gd2.DefaultUser || g.Glusterd2Secret != secret {
			t.Errorf("tls %v: REST user %q secret %q, want %q and the cluster's secret", tls, g.Glusterd2User, g.Glusterd2Secret, gd2.DefaultUser)
		}
		if want := map[bool]string{false: "", true: gd2TLSDir + "/" + TLSCAKey}[tls]; g.Glusterd2Cacert != want {
			t.Errorf("tls %v: CA %q, want %q", tls, g.Glusterd2Cacert, want)
		}
		var names []string
		for k, col := range c.CollectorsConf {
			names = append(names, k)
			if col.Name != k || col.Disabled || col.SyncInterval == 0 {
				t.Errorf("tls %v: collector %s: %+v", tls, k, col)
			}
		}
		slices.Sort(names)
		want := slices.Sorted(slices.Values(glusterExporterCollectors))
		if !slices.Equal(names, want) || slices.Contains(names, "gluster_brick") {
			t.Errorf("tls %v: collectors %v, want %v (no gluster_brick)", tls, names, want)
		}
	}
}

// The exporter runs only when asked for, from the server's own image,
// dials GD2 where GD2 listens (the pod's DNS name, https with TLS) and
// reads the secret from the cluster's auth Secret.
func TestTheExporterRunsBesideGD2OnlyWhenAskedFor(t *testing.T) {
	c := fixtures.CSICluster("gc")
	n := fixtures.Node("gc", "gc-z1-abcde", fixtures.PVCStorage(1))
	if got := len(NodeStatefulSet(c, n, "4.1.0").Spec.Template.Spec.Containers); got != 1 {
		t.Fatalf("without spec.gluster.metricsExporter the pod has %d containers", got)
	}
	before := NodeTemplateRevision(c, n)
	c.Spec.Gluster.MetricsExporter = ptr.To(true)
	if NodeTemplateRevision(c, n) == before {
		t.Error("turning the exporter on does not change the pod template's revision, so no server would get it")
	}
	for _, tls := range []bool{false, true} {
		if tls {
			c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "ca"}
		}
		spec := NodeStatefulSet(c, n, "4.1.0").Spec.Template.Spec
		if len(spec.Containers) != 2 || spec.Containers[1].Name != ContainerGlusterExporter {
			t.Fatalf("tls %v: containers %v", tls, spec.Containers)
		}
		gd2c, exp := spec.Containers[0], spec.Containers[1]
		if exp.Image != gd2c.Image {
			t.Errorf("tls %v: exporter image %s, GD2's %s", tls, exp.Image, gd2c.Image)
		}
		env := map[string]string{}
		for _, e := range exp.Env {
			env[e.Name] = e.Value
			if e.Name == envExporterSecret {
				name, key := AuthSecretRef(c)
				if r := e.ValueFrom.SecretKeyRef; r == nil || r.Name != name || r.Key != key {
					t.Errorf("tls %v: secret from %+v, want %s/%s", tls, e.ValueFrom, name, key)
				}
			}
		}
		scheme := map[bool]string{false: "http", true: "https"}[tls]
		if want := scheme + "://" + NodePodHost(n.Namespace, c.Name, n.Name) + ":24007"; env["GD2_ENDPOINTS"] != want {
			t.Errorf("tls %v: GD2_ENDPOINTS %q, want %q", tls, env["GD2_ENDPOINTS"], want)
		}
		if len(exp.Ports) != 1 || exp.Ports[0].ContainerPort != GlusterExporterPort || exp.Ports[0].Name != PortNameGlusterMetrics {
			t.Errorf("tls %v: ports %v", tls, exp.Ports)
		}
	}
	ext := fixtures.External("gc", 0, fixtures.ExternalNode("10.0.0.1", "zone-1"))
	ext.Spec.Gluster = &operatorv1alpha1.GlusterServerSpec{MetricsExporter: ptr.To(true)}
	if MetricsExporterEnabled(ext) {
		t.Error("an external cluster runs the exporter")
	}
}

// The shipped PodMonitor selects the server pods by their labels, reads
// the cluster from their cluster label and scrapes the exporter's port by
// its name.
func TestThePodMonitorFindsTheExporter(t *testing.T) {
	c := fixtures.CSICluster("gc")
	c.Spec.Gluster.MetricsExporter = ptr.To(true)
	n := fixtures.Node("gc", "gc-z1-abcde", fixtures.PVCStorage(1))
	tmpl := NodeStatefulSet(c, n, "4.1.0").Spec.Template
	for _, kv := range []string{monitoring.GlusterPodManagedBy, monitoring.GlusterPodComponent} {
		k, v, _ := strings.Cut(kv, "=")
		if tmpl.Labels[k] != v {
			t.Errorf("the PodMonitor selects %s, the pod has %q", kv, tmpl.Labels[k])
		}
	}
	if tmpl.Labels[monitoring.GlusterPodClusterLabel] != "gc" {
		t.Errorf("the PodMonitor reads the cluster from %s; the pod has %v", monitoring.GlusterPodClusterLabel, tmpl.Labels)
	}
	if p := tmpl.Spec.Containers[1].Ports[0]; p.Name != monitoring.GlusterMetricsPortName {
		t.Errorf("the PodMonitor scrapes port %s; the exporter's is %s", monitoring.GlusterMetricsPortName, p.Name)
	}
}
