package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gluster/anthill/gd2"
)

// Real glusterd2: a pool of GD2 nodes as processes on this machine, each
// with real bricks (glusterfsd on loop-mounted XFS images), its self-heal
// daemon and GD2's own helper mounts, for the tests that must see what
// real GD2 does (docs/testing.md, "Real glusterd2"). glusterd2 comes from
// hack/build-glusterd2.sh, glusterfsd and the FUSE client from Debian's
// glusterfs-server and glusterfs-client.
//
// Each node runs as a pod's containers would: in a PID and a mount
// namespace of its own (unshare --pid --fork --mount --propagation
// private --mount-proc), under a small launcher that is the namespace's
// PID 1 and reaps what GD2's daemons leave. When glusterd2 exits, the
// launcher exits and the kernel ends every process of the namespace: the
// node's bricks, its self-heal daemon and its helper mounts go with it,
// and its loop mounts with the mount namespace. Node i (from 1) listens
// on 127.0.0.(10+i): REST and SunRPC on :24007, peer gRPC on :24008. All
// nodes share one REST secret (written to each node's auth file before
// its first start), one external etcd (the control plane's, from
// BinDir) and a glusterfsd shim first on PATH that gives every brick a
// port of its own: since glusterfs 6.6 a brick started without one binds
// 24007, which is GD2's.

// RealGD2BinEnv names the directory holding glusterd2 and glustercli;
// make test sets it from hack/build-glusterd2.sh. Unset, the framework
// asks the script where it built them.
const RealGD2BinEnv = "ANTHILL_GD2_BIN"

// realGD2Commands are the programs a real pool runs besides glusterd2:
// Debian's glusterfs-server and glusterfs-client, xfsprogs (the loop
// provisioner's mkfs), util-linux (unshare, losetup, mount, flock).
var realGD2Commands = []string{"glusterfsd", "glusterfs", "mkfs.xfs", "unshare", "losetup", "mount", "umount", "flock"}

// realGD2Install is the command that installs what realGD2Commands need.
const realGD2Install = "apt-get install glusterfs-server glusterfs-client xfsprogs util-linux"

// RealGD2Bin returns the directory of the built glusterd2 and glustercli,
// or why there is none (which command builds them, or why they cannot be
// built here).
func RealGD2Bin() (string, error) {
	if d := os.Getenv(RealGD2BinEnv); d != "" {
		if _, err := os.Stat(filepath.Join(d, "glusterd2")); err != nil {
			return "", fmt.Errorf("%s=%s holds no glusterd2: run make gd2", RealGD2BinEnv, d)
		}
		return d, nil
	}
	return builtPath("build-glusterd2.sh")
}

// glfshealDir is where Debian installs glfsheal, which GD2 runs for
// heal-info and looks up on PATH.
func glfshealDir() string {
	m, _ := filepath.Glob("/usr/lib/*/glusterfs/glfsheal")
	if len(m) == 0 {
		return ""
	}
	return filepath.Dir(m[0])
}

// RealGD2Missing says what this machine lacks to run a real GD2 pool, and
// which command provides it, or returns nil.
func RealGD2Missing() error {
	if os.Geteuid() != 0 {
		return errors.New("real glusterd2 needs root (loop devices, mounts, namespaces)")
	}
	var missing []string
	for _, c := range realGD2Commands {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if glfshealDir() == "" {
		missing = append(missing, "glfsheal")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		missing = append(missing, "/dev/fuse")
	}
	if len(missing) > 0 {
		return fmt.Errorf("real glusterd2 needs %s (%s; hack/debian-tools.sh install gluster)", strings.Join(missing, ", "), realGD2Install)
	}
	bin, err := BinDir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(bin, "etcd")); err != nil {
		return fmt.Errorf("real glusterd2 needs the control plane's etcd in %s: run make controlplane", bin)
	}
	if _, err := RealGD2Bin(); err != nil {
		return fmt.Errorf("real glusterd2 is not built: %w", err)
	}
	return nil
}

// Skipper is the part of testing.TB that RequireRealGD2 needs.
type Skipper interface {
	Helper()
	Skip(args ...any)
}

// RequireRealGD2 skips the test, with the exact reason, unless this
// machine can run a real GD2 pool.
func RequireRealGD2(t Skipper) {
	t.Helper()
	if err := RealGD2Missing(); err != nil {
		t.Skip(err.Error())
	}
}

// GD2PoolOptions shape one real GD2 pool.
type GD2PoolOptions struct {
	// Nodes is the number of GD2 nodes; each is started, none joined.
	Nodes int
	// Dir holds every node's state, run and log directories, its loop
	// devices and the etcd data; empty means a fresh temporary directory
	// that Stop removes.
	Dir string
	// Log receives one line per step; nil discards.
	Log io.Writer
}

// GD2Pool is a running set of real GD2 nodes sharing one etcd.
type GD2Pool struct {
	// Dir holds etcd/, bin/ (the glusterfsd shim) and one n<i>/ per node.
	Dir string
	// Secret is the REST secret every node's auth file holds.
	Secret string
	// EtcdURL is the etcd every node runs against (--noembed).
	EtcdURL string
	Nodes   []*GD2Node
	// KeepDir keeps the pool's directory after Stop (set it when a test
	// failed, to read the logs).
	KeepDir bool

	opts   GD2PoolOptions
	gd2Bin string
	etcd   *process
	ownDir bool
	mu     sync.Mutex
	mounts []*GlusterMount
}

// GD2Node is one real GD2 node of a pool.
type GD2Node struct {
	// Index counts from 1; the node listens on 127.0.0.(10+Index), or
	// 127.0.k.(10+Index) for the first k whose ports are all free when
	// another pool holds those.
	Index int
	// Name is n<Index>, the name of its directory.
	Name string
	// Addr is the node's loopback address.
	Addr string
	// PeerID is the id the node keeps (GD2_PEER_ID): GD2 gives a joining
	// peer a new id otherwise.
	PeerID string
	// Dir holds state/ (--localstatedir, with the auth file), run/
	// (--rundir: pid files, sockets, smart bricks' mount points), log/
	// (--logdir: glusterd2.log, the bricks' and daemons' logs) and
	// devices/ (the loop provisioner's devices).
	Dir string

	pool *GD2Pool
	mu   sync.Mutex
	proc *process
	// init is the host PID of the node's PID 1 (the launcher).
	init int
}

// StartGD2Pool starts etcd and opts.Nodes GD2 nodes and waits until every
// node answers /ping. The nodes are not peers yet: Join makes them one
// cluster. On any error everything started is stopped.
func StartGD2Pool(ctx context.Context, opts GD2PoolOptions) (_ *GD2Pool, err error) {
	if err := RealGD2Missing(); err != nil {
		return nil, err
	}
	if opts.Nodes < 1 || opts.Nodes > 200 {
		return nil, fmt.Errorf("a GD2 pool has 1 to 200 nodes, not %d", opts.Nodes)
	}
	gd2Bin, err := RealGD2Bin()
	if err != nil {
		return nil, err
	}
	p := &GD2Pool{opts: opts, Dir: opts.Dir, gd2Bin: gd2Bin}
	if p.Dir == "" {
		if p.Dir, err = os.MkdirTemp("", "anthill-gd2-"); err != nil {
			return nil, err
		}
		p.ownDir = true
	}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	p.Secret = hex.EncodeToString(secret)
	if err := p.writeShim(); err != nil {
		return nil, err
	}
	if err := p.startEtcd(ctx); err != nil {
		return nil, err
	}
	net3, err := freeLoopbackNet(opts.Nodes)
	if err != nil {
		return nil, err
	}
	for i := 1; i <= opts.Nodes; i++ {
		n := &GD2Node{
			Index: i, Name: fmt.Sprintf("n%d", i), Addr: fmt.Sprintf("127.0.%d.%d", net3, 10+i),
			PeerID: newUUID(), Dir: filepath.Join(p.Dir, fmt.Sprintf("n%d", i)), pool: p,
		}
		for _, d := range []string{"state", "run", "log", "devices"} {
			if err := os.MkdirAll(filepath.Join(n.Dir, d), 0o755); err != nil {
				return nil, err
			}
		}
		if err := os.WriteFile(filepath.Join(n.Dir, "state", "auth"), []byte(p.Secret), 0o600); err != nil {
			return nil, err
		}
		p.Nodes = append(p.Nodes, n)
	}
	for _, n := range p.Nodes {
		if err := n.Start(ctx); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *GD2Pool) logf(format string, args ...any) {
	if p.opts.Log != nil {
		fmt.Fprintf(p.opts.Log, "realgd2: "+format+"\n", args...)
	}
}

// startEtcd starts the control plane's etcd for the pool's nodes.
func (p *GD2Pool) startEtcd(ctx context.Context) error {
	bin, err := BinDir()
	if err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	p.EtcdURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	p.etcd, err = startProcess(p.Dir, filepath.Join(bin, "etcd"), "etcd",
		"--name=gd2", "--data-dir="+filepath.Join(p.Dir, "etcd"),
		"--listen-client-urls="+p.EtcdURL, "--advertise-client-urls="+p.EtcdURL,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=gd2="+peer, "--unsafe-no-fsync=true", "--log-level=warn")
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return poll(wctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if done, werr := p.etcd.exited(); done {
			return false, fmt.Errorf("etcd exited (%v): %s", werr, tail(p.etcd.logPath, 20))
		}
		return httpOK(ctx, p.EtcdURL+"/health")
	})
}

// freeLoopbackNet returns the first k from 0 such that 127.0.k.11 to
// 127.0.k.(10+nodes) have ports 24007 and 24008 free: GD2's ports are
// fixed, so another pool on this machine (another test process) takes
// the next k.
func freeLoopbackNet(nodes int) (int, error) {
	for k := 0; k < 64; k++ {
		free := true
		for i := 1; i <= nodes && free; i++ {
			for _, port := range []string{"24007", "24008"} {
				l, err := net.Listen("tcp", fmt.Sprintf("127.0.%d.%d:%s", k, 10+i, port))
				if err != nil {
					free = false
					break
				}
				l.Close()
			}
		}
		if free {
			return k, nil
		}
	}
	return 0, errors.New("no 127.0.k.0/24 with GD2's ports free for a pool (k < 64)")
}

// The glusterfsd shim: for a brick (an invocation with --brick-name) it
// takes the next port of the pool's range that nobody listens on, under a
// lock the pool's nodes share, and passes it as the brick's port and its
// server's listen port; every other invocation (the self-heal daemon, GD2's
// helper mounts) goes to Debian's glusterfsd unchanged.
const glusterfsdShim = `#!/bin/bash
# glusterfsd shim of one real GD2 pool (e2e/framework/realgd2.go).
real=/usr/sbin/glusterfsd
brick=
for a in "$@"; do
	[[ ${a} == --brick-name ]] && brick=1
done
[[ -n ${brick} ]] || exec "${real}" "$@"
exec 9>>"%[1]s/brick-ports.lock"
flock 9
next=$(cat "%[1]s/brick-ports.next" 2>/dev/null || echo %[2]d)
for ((port = next; port < %[3]d; port++)); do
	(exec 8<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null || break
done
if ((port >= %[3]d)); then
	port=%[2]d
fi
echo $((port + 1)) >"%[1]s/brick-ports.next"
exec 9>&-
exec "${real}" "$@" --brick-port "${port}" --xlator-option "*-server.listen-port=${port}"
`

// brickPortSpan is how many ports a pool's bricks take in turn.
const brickPortSpan = 500

func (p *GD2Pool) writeShim() error {
	base, err := freePortRange(brickPortSpan)
	if err != nil {
		return err
	}
	bin := filepath.Join(p.Dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	script := fmt.Sprintf(glusterfsdShim, p.Dir, base, base+brickPortSpan)
	return os.WriteFile(filepath.Join(bin, "glusterfsd"), []byte(script), 0o755)
}

// freePortRange returns the first of n consecutive ports in the band
// below the kernel's ephemeral range that freePorts leaves to bricks
// (brickBand), picked at random with the first free now; the shim skips
// any that is taken when a brick starts.
func freePortRange(n int) (int, error) {
	low := ephemeralLow()
	if low == 0 {
		low = 32768
	}
	if n > brickBand {
		return 0, fmt.Errorf("%d brick ports do not fit the band of %d", n, brickBand)
	}
	for tries := 0; tries < 100; tries++ {
		base := low - brickBand + mrand.IntN(brickBand-n+1)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base))
		if err != nil {
			continue
		}
		l.Close()
		return base, nil
	}
	return 0, fmt.Errorf("no free port in the bricks' band below %d", low)
}

// The launcher is PID 1 of a node's PID namespace: it starts glusterd2,
// passes it SIGTERM (PID 1 of a namespace gets from outside only the
// signals it handles, so the trap comes first), reaps every process GD2's daemons leave to it, and
// exits when glusterd2 does, which ends the namespace.
const gd2Launcher = `#!/bin/bash
# PID 1 of one real GD2 node (e2e/framework/realgd2.go).
trap 'stop=1; [[ -n ${gd2:-} ]] && kill -TERM "${gd2}" 2>/dev/null' TERM INT
"$@" &
gd2=$!
[[ -z ${stop:-} ]] || kill -TERM "${gd2}"
while kill -0 "${gd2}" 2>/dev/null; do
	wait "${gd2}"
done
`

// Start starts the node's glusterd2 in fresh PID and mount namespaces and
// waits until it answers /ping.
func (n *GD2Node) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		if done, _ := n.proc.exited(); !done {
			return fmt.Errorf("%s: already running", n.Name)
		}
	}
	p := n.pool
	launcher := filepath.Join(p.Dir, "bin", "launcher")
	if err := os.WriteFile(launcher, []byte(gd2Launcher), 0o755); err != nil {
		return err
	}
	path := strings.Join([]string{filepath.Join(p.Dir, "bin"), glfshealDir(), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}, ":")
	args := []string{
		"--pid", "--fork", "--mount", "--propagation", "private", "--mount-proc", "--kill-child",
		"--", launcher, filepath.Join(p.gd2Bin, "glusterd2"),
		"--localstatedir=" + filepath.Join(n.Dir, "state"),
		"--rundir=" + filepath.Join(n.Dir, "run"),
		"--logdir=" + filepath.Join(n.Dir, "log"), "--logfile=glusterd2.log", "--loglevel=info",
		"--clientaddress=" + n.Addr + ":24007", "--peeraddress=" + n.Addr + ":24008",
		"--noembed", "--etcdendpoints=" + p.EtcdURL, "--statedump=false",
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return err
	}
	// A node killed leaves its pid files, and GD2 trusts them: in a fresh
	// PID namespace the pids they name are small numbers that are often
	// taken again (glusterd2 itself is 2), so GD2 refused to start ("Failed
	// to create pid file: process is already running"), and then left a
	// brick unstarted ("failed to start daemon … process is already
	// running") while bricks status reported it online. A pod's container
	// starts with a fresh rundir, so the node's pid files go, as there.
	stale, _ := filepath.Glob(filepath.Join(n.Dir, "run", "*.pid"))
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	start := time.Now()
	proc, err := startWatchedProcess(n.Dir, unshare, "node", nil,
		[]string{"PATH=" + path, "GD2_PEER_ID=" + n.PeerID}, args...)
	if err != nil {
		return err
	}
	n.proc, n.init = proc, 0
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err = poll(wctx, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		if done, werr := proc.exited(); done {
			return false, fmt.Errorf("exited (%v): %s %s", werr, tail(proc.logPath, 10), tail(filepath.Join(n.Dir, "log", "glusterd2.log"), 10))
		}
		if n.init == 0 {
			n.init = childOf(proc.cmd.Process.Pid)
		}
		if n.init == 0 {
			return false, errors.New("no launcher yet")
		}
		return httpOK(ctx, n.Endpoint()+"/ping")
	})
	if err != nil {
		n.kill()
		return fmt.Errorf("%s: glusterd2 did not start: %w", n.Name, err)
	}
	p.logf("%s: glusterd2 up at %s in %s", n.Name, n.Endpoint(), time.Since(start).Round(time.Millisecond))
	return nil
}

// Stop sends glusterd2 SIGTERM, as a pod's deletion does, and waits until
// the node's namespace has ended (its bricks and daemons with it); after
// a minute it kills the node.
func (n *GD2Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return nil
	}
	if done, _ := n.proc.exited(); done {
		return nil
	}
	start := time.Now()
	if n.init > 0 {
		_ = syscall.Kill(n.init, syscall.SIGTERM)
	}
	select {
	case <-n.proc.done:
	case <-time.After(time.Minute):
		n.kill()
		return fmt.Errorf("%s: glusterd2 did not stop within a minute of SIGTERM; killed", n.Name)
	case <-ctx.Done():
		n.kill()
		return ctx.Err()
	}
	n.pool.logf("%s: stopped in %s", n.Name, time.Since(start).Round(time.Millisecond))
	return nil
}

// Kill sends SIGKILL to the node's PID 1, which ends every process of
// the node at once, as a node's or a pod's sudden death would.
func (n *GD2Node) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.kill()
	n.pool.logf("%s: killed", n.Name)
}

func (n *GD2Node) kill() {
	if n.proc == nil {
		return
	}
	if n.init > 0 {
		_ = syscall.Kill(n.init, syscall.SIGKILL)
	}
	_ = syscall.Kill(-n.proc.cmd.Process.Pid, syscall.SIGKILL)
	<-n.proc.done
}

// Restart stops the node (SIGTERM) and starts it again.
func (n *GD2Node) Restart(ctx context.Context) error {
	if err := n.Stop(ctx); err != nil {
		return err
	}
	return n.Start(ctx)
}

// Running reports whether the node's glusterd2 runs.
func (n *GD2Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return false
	}
	done, _ := n.proc.exited()
	return !done
}

// Endpoint is the node's REST base URL.
func (n *GD2Node) Endpoint() string { return "http://" + n.Addr + ":24007" }

// PeerAddress is the address other nodes join the node at.
func (n *GD2Node) PeerAddress() string { return n.Addr + ":24008" }

// Client returns a GD2 client of the node with the pool's secret.
func (n *GD2Node) Client() (*gd2.Client, error) {
	return gd2.New(gd2.Options{Endpoint: n.Endpoint(), Secret: n.pool.Secret, Timeout: 2 * time.Minute})
}

// Path is path as the node sees it (its bricks are mounted in its own
// mount namespace), for the test process to read: through /proc of the
// node's PID 1. Empty when the node does not run.
func (n *GD2Node) Path(path string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.init == 0 || n.proc == nil {
		return ""
	}
	if done, _ := n.proc.exited(); done {
		return ""
	}
	return ProcessPath(n.init, path)
}

// ProcessPath is path as process pid sees it in its own mount namespace
// (a container's, a node's), read from outside through procfs.
func ProcessPath(pid int, path string) string {
	return filepath.Join("/proc", strconv.Itoa(pid), "root", path)
}

// Mounted reports whether a file system is mounted at path, or above it
// inside the pool's directory, in the node's mount namespace: whether a
// brick's file system is mounted there (by GD2, or left behind).
func (n *GD2Node) Mounted(path string) (bool, error) {
	n.mu.Lock()
	init := n.init
	n.mu.Unlock()
	if init == 0 {
		return false, fmt.Errorf("%s does not run", n.Name)
	}
	// The mount table of the node's PID 1 is its mount namespace's.
	mi := fmt.Sprintf("/proc/%d/mountinfo", init)
	b, err := os.ReadFile(mi)
	if err != nil {
		return false, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) <= 4 {
			continue
		}
		// GD2 mounts a smart brick's file system one level above the
		// brick's path: any mount at path or above it, inside the pool's
		// directory, holds the brick.
		if mp := f[4]; mp == path || strings.HasPrefix(path, mp+"/") && strings.HasPrefix(mp, n.pool.Dir+"/") {
			return true, nil
		}
	}
	return false, nil
}

// LoopDevice creates the directory of a device for GD2's loop provisioner
// (each brick a sparse image in it, formatted XFS and loop-mounted by GD2)
// and returns its path, for gd2.DeviceAddRequest with ProvisionerLoop.
// xfsprogs refuses file systems under 300 MB: size bricks at least that.
func (n *GD2Node) LoopDevice(name string) (string, error) {
	d := filepath.Join(n.Dir, "devices", name)
	return d, os.MkdirAll(d, 0o755)
}

// Log is the path of the node's glusterd2 log.
func (n *GD2Node) Log() string { return filepath.Join(n.Dir, "log", "glusterd2.log") }

// Join adds every other node to the first one's cluster and returns the
// peer ids GD2 answered, by node.
func (p *GD2Pool) Join(ctx context.Context) (map[*GD2Node]string, error) {
	c, err := p.Nodes[0].Client()
	if err != nil {
		return nil, err
	}
	ids := map[*GD2Node]string{p.Nodes[0]: p.Nodes[0].PeerID}
	for _, n := range p.Nodes[1:] {
		peer, err := c.AddPeer(ctx, gd2.PeerAddRequest{Addresses: []string{n.PeerAddress()}})
		if err != nil {
			return nil, fmt.Errorf("peer add %s: %w", n.Name, err)
		}
		ids[n] = peer.ID
	}
	return ids, nil
}

// Stop stops every mount and node (SIGTERM, then SIGKILL of what is
// left) and etcd, and removes the pool's directory if the pool made it.
func (p *GD2Pool) Stop() {
	p.mu.Lock()
	mounts := p.mounts
	p.mounts = nil
	p.mu.Unlock()
	for _, m := range mounts {
		m.Unmount()
	}
	var wg sync.WaitGroup
	for _, n := range p.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if err := n.Stop(ctx); err != nil {
				p.logf("%v", err)
			}
		}()
	}
	wg.Wait()
	if p.etcd != nil {
		p.etcd.stop(10 * time.Second)
	}
	if p.ownDir && !p.KeepDir {
		os.RemoveAll(p.Dir)
	}
}

// GlusterMount is a FUSE mount of a volume by Debian's glusterfs client,
// in a mount namespace of its own: glusterfs is the namespace's only
// process, so the mount ends with it.
type GlusterMount struct {
	// Dir is the mount point as the client's namespace sees it.
	Dir  string
	proc *process
}

// Mount mounts volume from server's volfile (glusterfs
// --volfile-server=<server> --volfile-id=<volume>) and waits until the
// mount is there.
func (p *GD2Pool) Mount(ctx context.Context, server *GD2Node, volume string) (*GlusterMount, error) {
	p.mu.Lock()
	i := len(p.mounts)
	p.mu.Unlock()
	name := fmt.Sprintf("mount-%s-%d", volume, i)
	dir := filepath.Join(p.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, err
	}
	proc, err := startProcess(p.Dir, unshare, name,
		"--mount", "--propagation", "private", "--", "glusterfs", "-N",
		"--volfile-server="+server.Addr, "--volfile-id="+volume,
		"--log-file="+filepath.Join(p.Dir, name+".client.log"), dir)
	if err != nil {
		return nil, err
	}
	m := &GlusterMount{Dir: dir, proc: proc}
	p.mu.Lock()
	p.mounts = append(p.mounts, m)
	p.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = poll(wctx, 50*time.Millisecond, func(context.Context) (bool, error) {
		if done, werr := proc.exited(); done {
			return false, fmt.Errorf("glusterfs exited (%v): %s", werr, tail(filepath.Join(p.Dir, name+".client.log"), 10))
		}
		mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", proc.cmd.Process.Pid))
		if err != nil {
			return false, err
		}
		for _, l := range strings.Split(string(mi), "\n") {
			if f := strings.Fields(l); len(f) > 4 && f[4] == dir && strings.Contains(l, "fuse.glusterfs") {
				return true, nil
			}
		}
		return false, errors.New("not mounted yet")
	})
	if err != nil {
		m.Unmount()
		return nil, fmt.Errorf("mount %s from %s: %w", volume, server.Name, err)
	}
	p.logf("mounted %s from %s", volume, server.Name)
	return m, nil
}

// Path is rel under the mount, for the test process to read and write.
func (m *GlusterMount) Path(rel string) string {
	return filepath.Join(fmt.Sprintf("/proc/%d/root", m.proc.cmd.Process.Pid), m.Dir, rel)
}

// Unmount stops the client, which ends its mount namespace and the mount.
func (m *GlusterMount) Unmount() { m.proc.stop(10 * time.Second) }

// childOf returns the PID of a child of pid, 0 when it has none.
func childOf(pid int) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range ents {
		var child int
		if _, err := fmt.Sscan(e.Name(), &child); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// the last ')'.
		s := string(b)
		j := strings.LastIndexByte(s, ')')
		if j < 0 {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscan(s[j+1:], &state, &ppid); err == nil && ppid == pid {
			return child
		}
	}
	return 0
}

// httpOK reports whether GET url answers 200.
func httpOK(ctx context.Context, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return true, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
