package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A real node beside the kwok nodes: a kubelet, containerd (with runc and
// the CNI bridge plugin) and kube-proxy that run real containers, for the
// tests that must see the operator's image run as users run it.
//
// The node lives in a network and mount namespace of its own, held open
// by one process (the holder) that every other program of the node joins
// with nsenter: a veth pair links it to the host, so the node has an
// address of its own (kubelet refuses a loopback one), its kube-proxy's
// iptables rules and its CNI bridge touch nothing on the host, and every
// mount containerd and the kubelet make (root file systems, secrets, pod
// network namespaces) is in the node's mount namespace, gone with its
// last process. The pods' cgroups are under a cgroup root of the node's
// own. Stop kills every process of the node and removes the cgroups; the
// namespaces, the veth pair and the bridge go with the processes.
//
// The control plane listens on 127.0.0.1, which a pod cannot reach; a
// relay in the test process listens on the host's end of the veth pair
// and forwards to the API server, and the default/kubernetes Service's
// endpoints name the relay, so pods reach the API server through the
// Service's ClusterIP and kube-proxy, as in any cluster.

// RealNodeTaint is the taint the real node registers with, so that only
// pods that tolerate it run there.
var RealNodeTaint = corev1.Taint{Key: "anthill.gluster.org/real-node", Value: "true", Effect: corev1.TaintEffectNoSchedule}

// RealNodeLabel is the label the real node carries, for a nodeSelector.
const RealNodeLabel = "anthill.gluster.org/real-node"

// realNodeSandboxImage is the name the pause image is imported under and
// containerd's sandbox_image.
const realNodeSandboxImage = "localhost/anthill-e2e/pause:1"

// The programs of a real node: built by hack/build-realnode.sh into the
// control plane's bin directory, or Debian's packages on PATH.
var (
	realNodeBinaries = []string{"kubelet", "kube-proxy"}
	realNodeCommands = []string{"containerd", "ctr", "runc", "iptables", "nsenter", "unshare", "ip"}
)

// kubeletKernelTunables are the machine-wide sysctls the kubelet sets
// when they differ from what it wants (pkg/kubelet/cm, setupKernelTunables).
var kubeletKernelTunables = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// hostKernelTunables reads kubeletKernelTunables as the host has them.
func hostKernelTunables() map[string]string {
	m := map[string]string{}
	for _, k := range kubeletKernelTunables {
		if b, err := os.ReadFile("/proc/sys/" + k); err == nil {
			m[k] = strings.TrimSpace(string(b))
		}
	}
	return m
}

// cniBinDirs are where Debian (and upstream) install the CNI plugins.
var cniBinDirs = []string{"/usr/lib/cni", "/opt/cni/bin"}

// RealNodeMissing says what this machine lacks to run a real node, or
// returns nil.
func RealNodeMissing() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	bin, err := BinDir()
	if err != nil {
		return err
	}
	for _, b := range realNodeBinaries {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			missing = append(missing, b+" (make realnode)")
		}
	}
	for _, c := range realNodeCommands {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if cniBinDir() == "" {
		missing = append(missing, "CNI plugins")
	}
	if len(missing) > 0 {
		return fmt.Errorf("a real node needs %s (apt-get install containerd runc containernetworking-plugins iptables iproute2; make realnode)", strings.Join(missing, ", "))
	}
	return nil
}

func cniBinDir() string {
	for _, d := range cniBinDirs {
		if _, err := os.Stat(filepath.Join(d, "bridge")); err == nil {
			return d
		}
	}
	return ""
}

// RealNode is one running real node.
type RealNode struct {
	// Name is the Node's name.
	Name string
	// Dir holds the node's configuration, state and logs: containerd.log,
	// kubelet.log, kube-proxy.log, and pods/ (the containers' logs, as
	// /var/log/pods on a production node).
	Dir string
	// HostIP is the host's end of the veth pair: what the node's pods
	// reach the host at (a GD2 simulator for them listens there).
	HostIP string
	// NodeIP is the node's own address.
	NodeIP string
	// PodCIDR is the subnet of the node's pod bridge; the host routes it
	// to the node, so the test process reaches pods by their IPs.
	PodCIDR string
	// Socket is containerd's, for ctr --address (namespace k8s.io).
	Socket string

	cp         *ControlPlane
	holder     *process
	procs      []*process
	hostVeth   string
	cgroupRoot string
	relay      net.Listener
	relayWG    sync.WaitGroup
	stopOnce   sync.Once
	mntNS      string
	netNS      string
	// tunables are the host's kubeletKernelTunables before the node
	// started, which it must leave as they were.
	tunables map[string]string
	opts     RealNodeOptions
	dns      *clusterDNS
}

// RealNodeOptions shape a real node.
type RealNodeOptions struct {
	// Name is the Node's name; empty means "real-node".
	Name string
	// Untainted registers the node without RealNodeTaint (it keeps its
	// label), for pods the test cannot give a toleration: those the
	// operator makes (a GlusterCluster's etcd takes no placement).
	Untainted bool
	// ClusterDNS serves the cluster's names to the node's pods
	// (<service>.<ns>.svc, <pod>.<subdomain>.<ns>.svc) from the host's end
	// of the veth pair, and the kubelet gives pods that nameserver.
	ClusterDNS bool
}

// StartRealNode starts a real node registered with cp, waits until it is
// Ready, and returns it. Stop it when done; on an error everything
// started so far is stopped.
func (cp *ControlPlane) StartRealNode(ctx context.Context, opts RealNodeOptions) (_ *RealNode, err error) {
	if err := RealNodeMissing(); err != nil {
		return nil, err
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	n := &RealNode{Name: opts.Name, cp: cp, opts: opts}
	if n.Name == "" {
		n.Name = "real-node"
	}
	sweepDeadRealNodes(cp.logf)
	// Short: containerd's socket path must fit a unix socket address.
	if n.Dir, err = os.MkdirTemp("", realNodeDirPrefix); err != nil {
		return nil, err
	}
	// Whose node this is, for the sweep of a test binary that died.
	if err := os.WriteFile(filepath.Join(n.Dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	for _, d := range []string{"containerd", "cni", "cni-ipam", "pods", "kubelet", "runc"} {
		if err := os.MkdirAll(filepath.Join(n.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	n.tunables = hostKernelTunables()
	if err := n.startHolder(ctx); err != nil {
		return nil, fmt.Errorf("node namespaces: %w", err)
	}
	if err := n.network(ctx); err != nil {
		return nil, fmt.Errorf("node network: %w", err)
	}
	if err := n.startRelay(); err != nil {
		return nil, fmt.Errorf("API server relay: %w", err)
	}
	if err := n.publishAPIServer(ctx); err != nil {
		return nil, fmt.Errorf("kubernetes service endpoints: %w", err)
	}
	if opts.ClusterDNS {
		if n.dns, err = startClusterDNS(n.HostIP, cp.Client); err != nil {
			return nil, fmt.Errorf("cluster DNS: %w", err)
		}
	}
	if err := n.makeCgroupRoot(); err != nil {
		return nil, fmt.Errorf("cgroup root: %w", err)
	}
	if err := n.writeConfigs(); err != nil {
		return nil, err
	}
	cp.logf("real node %s: starting containerd", n.Name)
	if err := n.start("containerd", "containerd", "--config", filepath.Join(n.Dir, "containerd.toml")); err != nil {
		return nil, err
	}
	if err := n.waitSocket(ctx); err != nil {
		return nil, err
	}
	if err := n.importPause(ctx); err != nil {
		return nil, fmt.Errorf("pause image: %w", err)
	}
	cp.logf("real node %s: starting kubelet and kube-proxy", n.Name)
	if err := n.start("kubelet", filepath.Join(bin, "kubelet"),
		"--config="+filepath.Join(n.Dir, "kubelet.yaml"),
		"--kubeconfig="+filepath.Join(n.Dir, "kubeconfig"),
		"--root-dir="+kubeletRootDir,
		"--hostname-override="+n.Name, "--node-ip="+n.NodeIP,
		"--node-labels="+RealNodeLabel+"=true", "--v=2",
	); err != nil {
		return nil, err
	}
	if err := n.start("kube-proxy", filepath.Join(bin, "kube-proxy"),
		"--kubeconfig="+filepath.Join(n.Dir, "kubeconfig"),
		"--hostname-override="+n.Name, "--cluster-cidr="+n.PodCIDR,
		"--proxy-mode=iptables",
		// The node's network namespace cannot set the host's conntrack
		// table size; leave conntrack's settings as they are.
		"--conntrack-max-per-core=0", "--conntrack-tcp-timeout-established=0", "--conntrack-tcp-timeout-close-wait=0",
		"--v=2",
	); err != nil {
		return nil, err
	}
	if err := n.waitReady(ctx); err != nil {
		return nil, err
	}
	cp.logf("real node %s Ready at %s (pods %s, state in %s)", n.Name, n.NodeIP, n.PodCIDR, n.Dir)
	return n, nil
}

// kubeletRootDir is the kubelet's root directory in the node's mount
// namespace: the path of a production node, which CSI node plugins take
// as a hostPath (their registration directory, kubelet's pod directory).
const kubeletRootDir = "/var/lib/kubelet"

// startHolder starts the process that holds the node's network and mount
// namespaces. In its mount namespace (private, so nothing propagates to
// the host) tmpfs covers the directories containerd and the CNI plugins
// write outside their configured ones: /run/netns (the pods' network
// namespaces) and /var/lib/cni (the plugins' result cache); and the
// node's kubelet directory is bound at kubeletRootDir, a shared mount
// (a peer group of the node's alone), so that a container mounting
// kubelet's pod directory Bidirectional (a CSI node plugin) is allowed
// to, and its mounts reach the kubelet and the pods.
func (n *RealNode) startHolder(ctx context.Context) error {
	ready := filepath.Join(n.Dir, "holder-ready")
	lines := []string{
		"set -e",
		"mkdir -p /run/netns /var/lib/cni " + kubeletRootDir,
		"mount -t tmpfs -o mode=755 anthill-rn /run/netns",
		"mount -t tmpfs -o mode=755 anthill-rn /var/lib/cni",
		"mount --bind " + filepath.Join(n.Dir, "kubelet") + " " + kubeletRootDir,
		"mount --make-rshared " + kubeletRootDir,
	}
	// The kubelet sets these kernel tunables to its liking (overcommit
	// always, reboot 10 s after a panic, panic on an oops); they are not
	// namespaced, so it would set them for the whole machine. It reads
	// and writes copies bound over them in the node's mount namespace.
	for _, k := range kubeletKernelTunables {
		copyPath := filepath.Join(n.Dir, "sysctl", strings.ReplaceAll(k, "/", "."))
		lines = append(lines, fmt.Sprintf("mkdir -p %s && cat /proc/sys/%s > %s && mount --bind %s /proc/sys/%s", filepath.Dir(copyPath), k, copyPath, copyPath, k))
	}
	script := strings.Join(append(lines,
		"ip link set lo up",
		"echo 1 > /proc/sys/net/ipv4/ip_forward",
		"touch "+ready,
		"exec sleep infinity",
	), "\n")
	p, err := startProcess(n.Dir, "unshare", "holder", "--mount", "--net", "--propagation", "private", "--", "/bin/sh", "-c", script)
	if err != nil {
		return err
	}
	n.holder = p
	err = n.wait(ctx, time.Minute, func(context.Context) (bool, error) {
		if done, werr := p.exited(); done {
			return false, fmt.Errorf("holder exited (%v): %s", werr, tail(p.logPath, 10))
		}
		_, err := os.Stat(ready)
		return err == nil, nil
	})
	if err != nil {
		return err
	}
	pid := p.cmd.Process.Pid
	if n.mntNS, err = os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err != nil {
		return err
	}
	n.netNS, err = os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	return err
}

// network links the node's network namespace to the host by a veth pair
// on a /30 of 10.250.0.0/16 and gives the node a /24 of 10.251.0.0/16 for
// its pods, both chosen at random among those no other real node on this
// host uses (another node's veth has the chosen name).
func (n *RealNode) network(ctx context.Context) error {
	pid := strconv.Itoa(n.holder.cmd.Process.Pid)
	var last error
	for range 20 {
		// One choice names the veth, its /30 and the pod /24.
		i := rand.IntN(256)
		veth := fmt.Sprintf("anrn%d", i)
		err := run(ctx, "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", pid)
		if err != nil {
			last = err
			continue
		}
		n.hostVeth = veth
		n.HostIP = fmt.Sprintf("10.250.%d.1", i)
		n.NodeIP = fmt.Sprintf("10.250.%d.2", i)
		n.PodCIDR = fmt.Sprintf("10.251.%d.0/24", i)
		if routeExists(ctx, n.PodCIDR) {
			_ = run(ctx, "ip", "link", "del", veth)
			n.hostVeth = ""
			last = fmt.Errorf("pod subnet %s is routed already", n.PodCIDR)
			continue
		}
		steps := [][]string{
			{"ip", "addr", "add", n.HostIP + "/30", "dev", veth},
			{"ip", "link", "set", veth, "up"},
			{"nsenter", "-t", pid, "-n", "ip", "addr", "add", n.NodeIP + "/30", "dev", "eth0"},
			{"nsenter", "-t", pid, "-n", "ip", "link", "set", "eth0", "up"},
			{"nsenter", "-t", pid, "-n", "ip", "route", "add", "default", "via", n.HostIP},
			// The host reaches the pods (their metrics, the API server's
			// proxy) through the node, as a cluster's routes would.
			{"ip", "route", "add", n.PodCIDR, "via", n.NodeIP, "dev", veth},
			// Pods of two real nodes reach each other through the host:
			// it forwards what arrives on this veth (IPv4 forwarding is
			// decided by the incoming interface), and nothing else of the
			// machine's, which may have forwarding off.
			{"sysctl", "-qw", "net.ipv4.conf." + veth + ".forwarding=1"},
		}
		for _, s := range steps {
			if err := run(ctx, s[0], s[1:]...); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("no free veth name or pod subnet: %w", last)
}

func routeExists(ctx context.Context, cidr string) bool {
	out, err := exec.CommandContext(ctx, "ip", "route", "show", cidr).Output()
	return err == nil && len(bytes.TrimSpace(out)) > 0
}

// run runs a command, returning its output in the error when it fails.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// startRelay listens on the host's end of the veth pair and copies each
// connection to and from the API server: TLS passes through unchanged.
func (n *RealNode) startRelay() error {
	u, err := url.Parse(n.cp.Server)
	if err != nil {
		return err
	}
	target := u.Host
	if n.relay, err = net.Listen("tcp", net.JoinHostPort(n.HostIP, "0")); err != nil {
		return err
	}
	n.relayWG.Go(func() {
		var conns sync.WaitGroup
		defer conns.Wait()
		for {
			c, err := n.relay.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { relay(c, target) })
		}
	})
	return nil
}

func relay(c net.Conn, target string) {
	defer c.Close()
	s, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(s, c)
	go cp(c, s)
	<-done
	<-done
}

func (n *RealNode) relayPort() int32 {
	return int32(n.relay.Addr().(*net.TCPAddr).Port)
}

// publishAPIServer points the default/kubernetes Service at the relay
// (the control plane runs without the API server's endpoint reconciler,
// so the Service has no endpoints of its own) by the EndpointSlice
// kube-proxy reads.
func (n *RealNode) publishAPIServer(ctx context.Context) error {
	c := n.cp.Client
	port := n.relayPort()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes", discoveryv1.LabelManagedBy: "anthill-e2e"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{n.HostIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	return createOrReplace(ctx, func(ctx context.Context) error {
		_, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Create(ctx, slice, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context) error {
		return c.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Delete(ctx, slice.Name, metav1.DeleteOptions{})
	})
}

func createOrReplace(ctx context.Context, create, del func(context.Context) error) error {
	err := create(ctx)
	if apierrors.IsAlreadyExists(err) {
		if err := del(ctx); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		err = create(ctx)
	}
	return err
}

// start starts one program of the node inside its namespaces.
func (n *RealNode) start(name, bin string, args ...string) error {
	pid := strconv.Itoa(n.holder.cmd.Process.Pid)
	p, err := startProcess(n.Dir, "nsenter", name, append([]string{"-t", pid, "-m", "-n", "--", bin}, args...)...)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	return nil
}

// Healthy returns an error naming any program of the node that exited.
func (n *RealNode) Healthy() error {
	var errs []error
	for _, p := range append([]*process{n.holder}, n.procs...) {
		if p == nil {
			continue
		}
		if done, werr := p.exited(); done {
			errs = append(errs, fmt.Errorf("real node %s: %s %w (%v); log %s:\n%s", n.Name, p.name, errExited, werr, p.logPath, tail(p.logPath, 20)))
		}
	}
	return errors.Join(errs...)
}

func (n *RealNode) wait(ctx context.Context, limit time.Duration, fn func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return poll(ctx, 200*time.Millisecond, fn)
}

func (n *RealNode) waitSocket(ctx context.Context) error {
	return n.wait(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		if err := n.Healthy(); err != nil {
			return false, err
		}
		return n.ctr(ctx, "version") == nil, nil
	})
}

// ctr runs ctr against the node's containerd in the Kubernetes namespace.
func (n *RealNode) ctr(ctx context.Context, args ...string) error {
	return run(ctx, "ctr", append([]string{"--address", n.Socket, "--namespace", "k8s.io"}, args...)...)
}

// ImportImage imports an image archive (OCI or docker) into the node's
// containerd, where the kubelet finds it: nothing can be pulled here.
// flags are more `ctr images import` flags, such as the ones
// docs/install.md gives a user for a release's archive.
func (n *RealNode) ImportImage(ctx context.Context, archive string, flags ...string) error {
	return n.ctr(ctx, append(append([]string{"images", "import"}, flags...), archive)...)
}

// ContainerSpec returns the OCI runtime spec containerd gave a container
// (by its CRI id, as in a pod's status without the "containerd://"), as
// JSON: what runc ran.
func (n *RealNode) ContainerSpec(ctx context.Context, id string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "ctr", "--address", n.Socket, "--namespace", "k8s.io", "containers", "info", id).Output()
	if err != nil {
		return nil, fmt.Errorf("ctr containers info %s: %w", id, err)
	}
	return out, nil
}

// ContainerFile reads a file inside a running container (by its CRI
// id), through its main process's root (/proc/PID/root): what the
// container sees at that path, mounts included.
func (n *RealNode) ContainerFile(ctx context.Context, id, path string) ([]byte, error) {
	pid, err := n.ContainerPID(ctx, id)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "root", path))
}

// ContainerPID is the host pid of a running container's main process (by
// its CRI id).
func (n *RealNode) ContainerPID(ctx context.Context, id string) (int, error) {
	out, err := exec.CommandContext(ctx, "ctr", "--address", n.Socket, "--namespace", "k8s.io", "tasks", "ls").Output()
	if err != nil {
		return 0, fmt.Errorf("ctr tasks ls: %w", err)
	}
	// TASK PID STATUS
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == id && f[2] == "RUNNING" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, fmt.Errorf("no running task for container %s", id)
}

// ContainerLog returns what a container of a pod on the node wrote, from
// the kubelet's pod log directory (the node has no address the API server
// can reach for kubectl logs): every attempt's log, oldest first.
func (n *RealNode) ContainerLog(pod *corev1.Pod, container string) ([]byte, error) {
	dir := filepath.Join(n.Dir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID), container)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

func (n *RealNode) waitReady(ctx context.Context) error {
	return n.wait(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		if err := n.Healthy(); err != nil {
			return false, err
		}
		node, err := n.cp.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status != corev1.ConditionTrue {
					return false, fmt.Errorf("node %s not Ready: %s", n.Name, c.Message)
				}
				return true, nil
			}
		}
		return false, fmt.Errorf("node %s has no Ready condition", n.Name)
	})
}

// Stop stops the node: the kubelet and kube-proxy, then every process in
// the node's namespaces or cgroups (containerd, its shims, the
// containers), so the namespaces, their mounts, the veth pair and the
// bridge go; then it removes the cgroups, the Node object, the
// kubernetes Service's EndpointSlice and the node's directory. Safe to call
// more than once.
func (n *RealNode) Stop() {
	n.stopOnce.Do(func() {
		for i := len(n.procs) - 1; i >= 0; i-- {
			if n.procs[i].name != "containerd" {
				n.procs[i].stop(10 * time.Second)
			}
		}
		for range 50 {
			if n.killOwnProcesses() == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, p := range n.procs {
			<-p.done
		}
		if n.holder != nil {
			n.holder.stop(5 * time.Second)
		}
		if n.relay != nil {
			n.relay.Close()
			n.relayWG.Wait()
		}
		if n.dns != nil {
			n.dns.stop()
		}
		n.removeCgroupRoot()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = n.cp.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
		_ = n.cp.Client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Delete(ctx, "kubernetes", metav1.DeleteOptions{})
		if n.Dir != "" {
			_ = os.RemoveAll(n.Dir)
		}
	})
}

// killOwnProcesses sends SIGKILL to every process in the node's mount or
// network namespace (other than the holder, which keeps them open until
// the rest are gone) or in its cgroups, and returns how many it found.
func (n *RealNode) killOwnProcesses() int {
	pids := n.ownProcesses()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids)
}

func (n *RealNode) ownProcesses() []int {
	seen := map[int]bool{}
	holder := 0
	if n.holder != nil {
		holder = n.holder.cmd.Process.Pid
	}
	if n.mntNS != "" {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == holder {
				continue
			}
			mnt, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
			net, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
			if mnt == n.mntNS || net == n.netNS {
				seen[pid] = true
			}
		}
	}
	for _, dir := range n.cgroupDirs() {
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(path)
			for f := range strings.FieldsSeq(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid != holder {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	pids := make([]int, 0, len(seen))
	for pid := range seen {
		pids = append(pids, pid)
	}
	return pids
}

// Leftovers reports what a stopped node left on the host or changed
// there: processes in its namespaces or cgroups or naming its directory,
// its cgroups, mounts under its directory, its veth and route, the
// kernel tunables the kubelet sets. Nil when Stop cleaned up.
func (n *RealNode) Leftovers() error {
	var errs []error
	if pids := append(n.ownProcesses(), processesNaming(n.Dir)...); len(pids) > 0 {
		errs = append(errs, fmt.Errorf("processes %v", pids))
	}
	for _, d := range n.cgroupDirs() {
		if _, err := os.Stat(d); err == nil {
			errs = append(errs, fmt.Errorf("cgroup %s", d))
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil && n.Dir != "" && bytes.Contains(b, []byte(n.Dir)) {
		errs = append(errs, fmt.Errorf("mounts under %s", n.Dir))
	}
	if n.hostVeth != "" {
		if _, err := net.InterfaceByName(n.hostVeth); err == nil {
			errs = append(errs, fmt.Errorf("network device %s", n.hostVeth))
		}
	}
	for k, v := range hostKernelTunables() {
		if was, ok := n.tunables[k]; ok && was != v {
			errs = append(errs, fmt.Errorf("kernel tunable %s changed from %s to %s", k, was, v))
		}
	}
	if n.PodCIDR != "" && routeExists(context.Background(), n.PodCIDR) {
		errs = append(errs, fmt.Errorf("route to %s", n.PodCIDR))
	}
	return errors.Join(errs...)
}

// realNodeDirPrefix starts the name of every real node's directory, in
// the temporary directory, and its cgroup root.
const realNodeDirPrefix = "anthill-rn-"

// sweepDeadRealNodes stops what real nodes of test processes that died
// without stopping them left: their kubelet, kube-proxy and containerd
// died with the test binary, but containerd's shims and the containers
// they run did not. A node is dead when the process named in its
// directory's owner file is gone; what is left of it is found by its
// cgroup root and by the node's directory in a process's command line.
func sweepDeadRealNodes(logf func(string, ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), realNodeDirPrefix+"*"))
	for _, dir := range dirs {
		owner, err := os.ReadFile(filepath.Join(dir, "owner"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(owner))); err == nil && syscall.Kill(pid, 0) == nil {
			continue
		}
		dead := &RealNode{Name: "(dead)", Dir: dir, cgroupRoot: "/" + filepath.Base(dir)}
		for range 50 {
			pids := dead.ownProcesses()
			pids = append(pids, processesNaming(dir)...)
			if len(pids) == 0 {
				break
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(100 * time.Millisecond)
		}
		dead.removeCgroupRoot()
		_ = os.RemoveAll(dir)
		logf("swept the real node a dead test process left in %s", dir)
	}
}

// processesNaming returns the processes whose command line names dir.
func processesNaming(dir string) []int {
	if dir == "" {
		return nil
	}
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmdline, []byte(dir+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
