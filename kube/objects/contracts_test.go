package objects

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

// builtPod is one pod template the builders made, named for messages.
type builtPod struct {
	what       string
	spec       corev1.PodSpec
	nodePlugin bool
}

// contractCase is a cluster shape; every pod the builders make for it is
// checked.
type contractCase struct {
	name    string
	cluster *operatorv1alpha1.GlusterCluster
	nodes   []*operatorv1alpha1.GlusterNode
}

func contractCases() []contractCase {
	withCA := func(c *operatorv1alpha1.GlusterCluster) *operatorv1alpha1.GlusterCluster {
		c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "ca"}
		return c
	}
	automatic := func() *operatorv1alpha1.GlusterCluster {
		c := fixtures.CSICluster("gc", fixtures.FileDriver)
		c.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
		for i := range c.Spec.NodeTemplates {
			c.Spec.NodeTemplates[i].Nodes = nil
			c.Spec.NodeTemplates[i].MinNodes, c.Spec.NodeTemplates[i].MaxNodes = ptr.To[int32](1), ptr.To[int32](3)
		}
		return c
	}
	claims := fixtures.Node("gc", "gc-z1-abcde", fixtures.PVCStorage(3))
	hostDevices := fixtures.Node("gc", "gc-host-a", &operatorv1alpha1.NodeStorage{Host: "kube-a", Devices: []string{"/dev/vdb", "/dev/vdc"}})
	loop := fixtures.Node("gc", "gc-z1-loopy", fixtures.PVCStorage(2))
	loop.Spec.Storage.Provisioner = ProvisionerLoop
	servers := []*operatorv1alpha1.GlusterNode{claims, hostDevices, loop}
	var out []contractCase
	for _, drivers := range [][]operatorv1alpha1.GlusterDriver{
		nil, {fixtures.FileDriver}, {fixtures.BlockDriver}, {fixtures.FileDriver, fixtures.BlockDriver},
	} {
		d := fmt.Sprint(drivers)
		out = append(out,
			contractCase{"manual " + d, fixtures.CSICluster("gc", drivers...), servers},
			contractCase{"manual with a CA " + d, withCA(fixtures.CSICluster("gc", drivers...)), servers},
			contractCase{"external " + d, withDrivers(fixtures.External("gc", 0, fixtures.ExternalNode("10.0.0.1", "zone-1")), drivers), nil},
			contractCase{"external with a CA " + d, withCA(withDrivers(fixtures.External("gc", 0, fixtures.ExternalNode("10.0.0.1", "zone-1")), drivers)), nil},
		)
	}
	snapshots := func(c *operatorv1alpha1.GlusterCluster) *operatorv1alpha1.GlusterCluster {
		if c.Spec.CSI == nil {
			c.Spec.CSI = &operatorv1alpha1.CSISpec{}
		}
		c.Spec.CSI.Snapshots = &operatorv1alpha1.CSISnapshots{Enabled: true}
		return c
	}
	exporter := func(c *operatorv1alpha1.GlusterCluster) *operatorv1alpha1.GlusterCluster {
		c.Spec.Gluster.MetricsExporter = ptr.To(true)
		return c
	}
	out = append(out,
		contractCase{"manual with gluster-exporter", exporter(fixtures.CSICluster("gc")), servers},
		contractCase{"manual with gluster-exporter and a CA", exporter(withCA(fixtures.CSICluster("gc"))), servers},
		contractCase{"automatic", automatic(), servers},
		contractCase{"automatic with a CA", withCA(automatic()), servers},
		contractCase{"manual with snapshots", snapshots(fixtures.CSICluster("gc", fixtures.FileDriver)), servers},
		contractCase{"external with snapshots and a CA", snapshots(withCA(withDrivers(fixtures.External("gc", 0, fixtures.ExternalNode("10.0.0.1", "zone-1")), nil))), nil},
	)
	return out
}

func withDrivers(c *operatorv1alpha1.GlusterCluster, d []operatorv1alpha1.GlusterDriver) *operatorv1alpha1.GlusterCluster {
	c.Spec.Drivers = d
	return c
}

// builtPods are every pod template the builders make for tc.
func builtPods(tc contractCase) []builtPod {
	c := tc.cluster
	var out []builtPod
	if !IsExternal(c) {
		for _, n := range tc.nodes {
			out = append(out, builtPod{"node " + n.Name, NodeStatefulSet(c, n, "4.1.0").Spec.Template.Spec, false})
		}
		out = append(out, builtPod{"etcd", EtcdStatefulSet(c).Spec.Template.Spec, false})
	}
	o := DesiredCSIObjects(c, "4.1.0")
	for _, d := range o.Controllers {
		out = append(out, builtPod{"Deployment " + d.Name, d.Spec.Template.Spec, false})
	}
	for _, d := range o.NodePlugins {
		out = append(out, builtPod{"DaemonSet " + d.Name, d.Spec.Template.Spec, true})
	}
	return out
}

var expansionRE = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// contractViolations are the ways ctr breaks k.
func contractViolations(ctr corev1.Container, k *Contract) []string {
	var v []string
	bad := func(format string, a ...any) { v = append(v, fmt.Sprintf(format, a...)) }
	if k.Unbuilt {
		bad("runs %s, of which no image exists (%s)", k.Component, k.Source)
	}
	if ctr.Image == "" {
		bad("has no image")
	}
	args := slices.Clone(ctr.Args)
	command := withoutPrelude(ctr.Command, k)
	switch {
	case k.Command == nil && len(ctr.Command) > 0:
		bad("replaces the image's entrypoint with %q", ctr.Command)
	case k.Command != nil:
		if len(command) < len(k.Command) || !slices.Equal(command[:len(k.Command)], k.Command) {
			bad("command %q, want it to start %q (or one of its preludes)", ctr.Command, k.Command)
		} else {
			args = append(slices.Clone(command[len(k.Command):]), args...)
		}
	}
	expanded := map[string]bool{}
	given := map[string]bool{}
	for _, a := range args {
		for _, m := range expansionRE.FindAllStringSubmatch(a, -1) {
			expanded[m[1]] = true
		}
		if !strings.HasPrefix(a, "--") {
			bad("argument %q is not a flag", a)
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		given[name] = true
		if !slices.Contains(k.Flags, name) {
			bad("flag %s is not one %s reads", name, k.Component)
		}
	}
	for _, f := range k.Required {
		if !given[f] {
			bad("required flag %s missing", f)
		}
	}
	for _, e := range ctr.Env {
		if !expanded[e.Name] && !envRead(k.Env, e.Name) {
			bad("variable %s is not one %s reads", e.Name, k.Component)
		}
	}
	mounts := map[string]bool{}
	for _, m := range ctr.VolumeMounts {
		mounts[m.MountPath] = true
		if !slices.Contains(k.Mounts, m.MountPath) && !slices.Contains(k.OptionalMounts, m.MountPath) {
			bad("mount %s is read by nothing in %s", m.MountPath, k.Component)
		}
	}
	for _, p := range k.Mounts {
		if !mounts[p] {
			bad("required mount %s missing", p)
		}
	}
	sc := ctr.SecurityContext
	if k.Privileged && (sc == nil || !ptr.Deref(sc.Privileged, false)) {
		bad("not privileged")
	}
	for _, cp := range k.Capabilities {
		if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Add, cp) {
			bad("capability %s missing", cp)
		}
	}
	var ports []int32
	for _, p := range ctr.Ports {
		ports = append(ports, p.ContainerPort)
		if !slices.Contains(k.Ports, p.ContainerPort) {
			bad("port %d is not served by %s", p.ContainerPort, k.Component)
		}
	}
	for _, p := range k.Ports {
		if !slices.Contains(ports, p) {
			bad("port %d not declared", p)
		}
	}
	if k.LivenessPath != "" {
		if lp := ctr.LivenessProbe; lp == nil || lp.HTTPGet == nil || lp.HTTPGet.Path != k.LivenessPath {
			bad("no liveness probe on %s", k.LivenessPath)
		}
	}
	for _, d := range ctr.VolumeDevices {
		// Sheet §6: a privileged container sees the host's /dev; a claim
		// at a path a host may have is ignored or clashes with the host's
		// own disk.
		if !strings.HasPrefix(d.DevicePath, claimDeviceDir+"/") {
			bad("claim %s appears at %s, a path a host may have", d.Name, d.DevicePath)
		}
	}
	return v
}

// withoutPrelude is command without the leading shell, "-c" and script
// of one of k's preludes, if it starts with one.
func withoutPrelude(command []string, k *Contract) []string {
	for _, p := range k.Preludes {
		if len(command) > 3 && command[0] == p.Shell && command[1] == "-c" && command[2] == p.Script {
			return command[3:]
		}
	}
	return command
}

func envRead(read []string, name string) bool {
	for _, r := range read {
		if p, ok := strings.CutSuffix(r, "*"); ok && strings.HasPrefix(name, p) || r == name {
			return true
		}
	}
	return false
}

func TestEveryContainerKeepsItsImageContract(t *testing.T) {
	for _, tc := range contractCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range builtPods(tc) {
				for _, ctr := range p.spec.Containers {
					k := ContractOf(ctr.Name, p.nodePlugin)
					if k == nil {
						t.Errorf("%s: container %s has no contract", p.what, ctr.Name)
						continue
					}
					for _, v := range contractViolations(ctr, k) {
						t.Errorf("%s: container %s %s", p.what, ctr.Name, v)
					}
				}
			}
		})
	}
}

// The name the StorageClass, the CSIDriver object, kubelet's plugin paths
// and the provisioner answer to is the one the driver registers.
func TestEveryCSIObjectNamesTheDriversOwnName(t *testing.T) {
	for _, tc := range contractCases() {
		t.Run(tc.name, func(t *testing.T) {
			o := DesiredCSIObjects(tc.cluster, "4.1.0")
			for _, sc := range o.StorageClasses {
				if sc.Provisioner != CSIFileDriverName {
					t.Errorf("StorageClass %s names provisioner %q; the driver registers %q", sc.Name, sc.Provisioner, CSIFileDriverName)
				}
				for k := range sc.Parameters {
					if !slices.Contains(CSIFileParameters, k) {
						t.Errorf("StorageClass %s sets parameter %q, which the driver does not read", sc.Name, k)
					}
				}
			}
			for _, d := range o.Drivers {
				if d.Name != CSIFileDriverName {
					t.Errorf("CSIDriver %q; the driver registers %q", d.Name, CSIFileDriverName)
				}
			}
			want := kubeletPluginsDir + "/" + CSIFileDriverName
			for _, ds := range o.NodePlugins {
				for _, v := range ds.Spec.Template.Spec.Volumes {
					if v.Name == volumeSocketDir && (v.HostPath == nil || v.HostPath.Path != want) {
						t.Errorf("DaemonSet %s: socket directory %v, want %s", ds.Name, v.HostPath, want)
					}
				}
				for _, c := range ds.Spec.Template.Spec.Containers {
					if c.Name == containerRegistrar && !slices.Contains(c.Args, "--kubelet-registration-path="+want+"/csi.sock") {
						t.Errorf("DaemonSet %s: registrar %q, want its socket under %s", ds.Name, c.Args, want)
					}
				}
			}
		})
	}
}
