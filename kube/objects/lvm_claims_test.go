package objects

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

// The three kinds of server storage: LVM on claims, loop on claims, host
// devices.
func storageKinds() (lvm, loop, host *operatorv1alpha1.GlusterNode) {
	lvm = fixtures.Node("gc", "gc-z1-lvm", fixtures.PVCStorage(2))
	loop = fixtures.Node("gc", "gc-z1-loop", fixtures.PVCStorage(2))
	loop.Spec.Storage.Provisioner = ProvisionerLoop
	host = fixtures.Node("gc", "gc-host-a", &operatorv1alpha1.NodeStorage{Host: "kube-a", Devices: []string{"/dev/vdb"}})
	return lvm, loop, host
}

func gd2Container(t *testing.T, c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) (corev1.PodTemplateSpec, corev1.Container) {
	t.Helper()
	tmpl := NodeStatefulSet(c, n, "4.1.0").Spec.Template
	for _, ctr := range tmpl.Spec.Containers {
		if ctr.Name == ContainerGD2 {
			return tmpl, ctr
		}
	}
	t.Fatalf("node %s: no %s container", n.Name, ContainerGD2)
	return tmpl, corev1.Container{}
}

// A GD2 container on LVM claims activates its volume groups and makes
// their nodes before glusterd2 starts, with the very flags every other
// GD2 container has; loop and host-device containers run glusterd2 alone.
func TestGD2OnLVMClaimsActivatesItsVolumeGroupsFirst(t *testing.T) {
	c := fixtures.CSICluster("gc")
	lvm, loop, host := storageKinds()
	plain := []string{gd2Binary, "--config=" + gd2ConfigFile, "--logfile=stdout"}
	for _, n := range []*operatorv1alpha1.GlusterNode{loop, host} {
		if _, ctr := gd2Container(t, c, n); !slices.Equal(ctr.Command, plain) {
			t.Errorf("node %s: command %q, want glusterd2 alone %q", n.Name, ctr.Command, plain)
		}
	}
	_, ctr := gd2Container(t, c, lvm)
	want := append([]string{"/bin/sh", "-c", lvmPrelude}, plain...)
	if !slices.Equal(ctr.Command, want) {
		t.Fatalf("LVM claims node: command %q, want %q", ctr.Command, want)
	}
	for _, step := range []string{"vgchange --activate y", "vgmknodes", `exec "$0" "$@"`} {
		if !strings.Contains(lvmPrelude, step) {
			t.Errorf("prelude runs no %q:\n%s", step, lvmPrelude)
		}
	}
	if !strings.HasSuffix(lvmPrelude, `exec "$0" "$@"`) {
		t.Errorf("prelude does not end by exec'ing glusterd2:\n%s", lvmPrelude)
	}
	if ctr.Args != nil {
		t.Errorf("args %q: the flags belong after the prelude in the command", ctr.Args)
	}
}

// stubDir is a PATH directory whose vgchange and vgmknodes log their
// arguments to log and exit with the given codes, and whose glusterd2
// logs its PID and arguments.
func stubDir(t *testing.T, vgchange, vgmknodes int) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "calls")
	stub := func(name, body string) {
		script := "#!/bin/sh\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stub("vgchange", `printf 'vgchange|%s\n' "$*" >>`+log+"\nexit "+strconv.Itoa(vgchange))
	stub("vgmknodes", `printf 'vgmknodes|%s\n' "$*" >>`+log+"\nexit "+strconv.Itoa(vgmknodes))
	stub("glusterd2", `printf 'glusterd2|%s|%s\n' "$$" "$*" >>`+log)
	return dir, log
}

// The prelude, run by a real /bin/sh as the container runs it, calls the
// LVM commands in order, limited to the node's claims, and replaces
// itself by glusterd2 with exactly its flags whether or not they succeed
// (they exit 0 with no volume group yet; a failure leaves the bricks
// offline, as before, and is logged).
func TestLVMPreludeExecsGlusterd2WithItsFlags(t *testing.T) {
	if _, err := os.Stat(imageShell); err != nil {
		t.Skipf("no %s here: %v", imageShell, err)
	}
	flags := []string{"--config=" + gd2ConfigFile, "--logfile=stdout"}
	for _, tc := range []struct {
		name                string
		vgchange, vgmknodes int
		logged              string
	}{
		{"no volume group yet, or all activated", 0, 0, ""},
		{"vgchange fails", 5, 0, "anthill: vgchange --activate y failed"},
		{"vgmknodes fails", 0, 5, "anthill: vgmknodes failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, log := stubDir(t, tc.vgchange, tc.vgmknodes)
			cmd := exec.Command(imageShell, append([]string{"-c", lvmPrelude, filepath.Join(dir, "glusterd2")}, flags...)...)
			cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin"}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("prelude: %v\n%s", err, stderr.String())
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			conf := "--config " + lvmClaimFilter
			want := []string{
				"vgchange|--activate y " + conf,
				"vgmknodes|" + conf,
				"glusterd2|" + strconv.Itoa(cmd.Process.Pid) + "|" + strings.Join(flags, " "),
			}
			if got := strings.Split(strings.TrimSpace(string(b)), "\n"); !slices.Equal(got, want) {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if tc.logged == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tc.logged) {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.logged)
			}
		})
	}
}
