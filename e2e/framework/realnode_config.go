package framework

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeConfigs writes containerd's configuration, the CNI network, the
// kubelet's configuration and the kubeconfig the kubelet and kube-proxy
// share.
func (n *RealNode) writeConfigs() error {
	n.Socket = filepath.Join(n.Dir, "containerd.sock")
	// containerd: everything of its own under the node's directory. root
	// here cannot give a process a negative oom_score_adj, which runc
	// asks for the pause container unless the CRI plugin restricts the
	// score to the kubelet's range.
	containerd := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[6]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
`, filepath.Join(n.Dir, "containerd", "root"), filepath.Join(n.Dir, "containerd", "state"), n.Socket,
		filepath.Join(n.Dir, "containerd", "opt"), realNodeSandboxImage, filepath.Join(n.Dir, "runc"),
		cniBinDir(), filepath.Join(n.Dir, "cni"))
	if err := os.WriteFile(filepath.Join(n.Dir, "containerd.toml"), []byte(containerd), 0o644); err != nil {
		return err
	}
	// The pods' bridge, inside the node's network namespace; outbound
	// traffic is masqueraded to the node's address.
	cni := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "anthill-real-node",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "anthill0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": n.PodCIDR}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": filepath.Join(n.Dir, "cni-ipam"),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(cni, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.Dir, "cni", "10-anthill.conflist"), b, 0o644); err != nil {
		return err
	}
	// The kubelet. This kernel has cgroup v1 and no systemd; swap is
	// tolerated; the eviction thresholds are low, since the test
	// machine's disk is shared and its fill is none of the test's
	// business. Anonymous, always-allowed access to the kubelet's API is
	// safe here: it listens on the node's own address only.
	taints := fmt.Sprintf("registerWithTaints:\n  - key: %s\n    value: %q\n    effect: %s\n", RealNodeTaint.Key, RealNodeTaint.Value, RealNodeTaint.Effect)
	if n.opts.Untainted {
		taints = ""
	}
	// Pods get the node's cluster DNS (realnode_dns.go) as their
	// nameserver, as on any cluster, when the node serves one.
	dns := ""
	if n.dns != nil {
		dns = fmt.Sprintf("clusterDomain: %s\nclusterDNS:\n  - %s\n", clusterDomain, n.HostIP)
	}
	kubelet := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %[1]s
failSwapOn: false
containerRuntimeEndpoint: unix://%[2]s
podLogsDir: %[3]s
address: %[4]s
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
maxPods: 30
serializeImagePulls: false
%[8]sauthentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
resolvConf: /etc/resolv.conf
%[9]s`, n.cgroupRoot, n.Socket, filepath.Join(n.Dir, "pods"), n.NodeIP, RealNodeTaint.Key, RealNodeTaint.Value, RealNodeTaint.Effect, taints, dns)
	if err := os.WriteFile(filepath.Join(n.Dir, "kubelet.yaml"), []byte(kubelet), 0o644); err != nil {
		return err
	}
	// The API server through the relay; its serving certificate names
	// "kubernetes", not the relay's address.
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["anthill-test"] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://%s:%d", n.HostIP, n.relayPort()),
		CertificateAuthorityData: n.cp.pki.caPEM, TLSServerName: "kubernetes",
	}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: n.cp.pki.adminCertPEM, ClientKeyData: n.cp.pki.adminKeyPEM}
	cfg.Contexts["anthill-test"] = &clientcmdapi.Context{Cluster: "anthill-test", AuthInfo: "admin"}
	cfg.CurrentContext = "anthill-test"
	return clientcmd.WriteToFile(*cfg, filepath.Join(n.Dir, "kubeconfig"))
}

// cgroupMounts returns the mount points of the host's cgroup
// hierarchies: one per v1 controller set, or the v2 one.
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		// ID parent major:minor root mountpoint options ... - fstype source options
		fields := strings.Fields(s.Text())
		sep := slices.Index(fields, "-")
		if sep < 0 || sep+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		if t := fields[sep+1]; t == "cgroup" || t == "cgroup2" {
			mounts = append(mounts, fields[4])
		}
	}
	return mounts, s.Err()
}

// cgroupDirs are the node's cgroup root in every hierarchy.
func (n *RealNode) cgroupDirs() []string {
	if n.cgroupRoot == "" {
		return nil
	}
	mounts, _ := cgroupMounts()
	dirs := make([]string, 0, len(mounts))
	for _, m := range mounts {
		dirs = append(dirs, filepath.Join(m, n.cgroupRoot))
	}
	return dirs
}

// makeCgroupRoot creates the node's cgroup root (the kubelet's cgroupRoot,
// under which it makes kubepods) in every hierarchy, so two real nodes on
// one host never share their pods' cgroups. A new cpuset cgroup has no
// CPUs or memory nodes until given its parent's.
func (n *RealNode) makeCgroupRoot() error {
	n.cgroupRoot = "/" + filepath.Base(n.Dir) // realNodeDirPrefix...
	for _, d := range n.cgroupDirs() {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(d), f))
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(d, f), err)
			}
		}
	}
	return nil
}

// removeCgroupRoot removes the node's cgroups, deepest first; a cgroup
// whose last process just died may take a moment to be removable.
func (n *RealNode) removeCgroupRoot() {
	for _, root := range n.cgroupDirs() {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			for range 50 {
				if err := os.Remove(dirs[i]); err == nil || os.IsNotExist(err) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// importPause imports the pause program (PauseBinary, static) as
// containerd's sandbox image.
func (n *RealNode) importPause(ctx context.Context) error {
	bin, err := PauseBinary.Path(ctx)
	if err != nil {
		return err
	}
	archive := filepath.Join(n.Dir, "pause.tar")
	if err := writeSingleBinaryImage(bin, "/pause", realNodeSandboxImage, archive); err != nil {
		return err
	}
	return n.ImportImage(ctx, archive)
}

// writeSingleBinaryImage writes an OCI image archive of one layer holding
// the binary at path, which is also the entrypoint, named ref.
func writeSingleBinaryImage(binary, path, ref, archive string) error {
	exe, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(path, "/"), Mode: 0o755, Size: int64(len(exe)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(exe); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	blobs := map[string][]byte{}
	add := func(b []byte) (string, int) {
		sum := sha256.Sum256(b)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[d] = b
		return d, len(b)
	}
	layerDigest, layerSize := add(layer.Bytes())
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Entrypoint": []string{path}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	if err != nil {
		return err
	}
	configDigest, configSize := add(config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": configDigest, "size": configSize},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": layerSize}},
	})
	if err != nil {
		return err
	}
	manifestDigest, manifestSize := add(manifest)
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifestDigest, "size": manifestSize,
			"annotations": map[string]string{"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref},
		}},
	})
	if err != nil {
		return err
	}
	f, err := os.Create(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	aw := tar.NewWriter(f)
	write := func(name string, b []byte) error {
		if err := aw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := aw.Write(b)
		return err
	}
	if err := write("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := write("index.json", index); err != nil {
		return err
	}
	for _, d := range []string{layerDigest, configDigest, manifestDigest} {
		if err := write("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), blobs[d]); err != nil {
			return err
		}
	}
	if err := aw.Close(); err != nil {
		return err
	}
	return f.Close()
}
