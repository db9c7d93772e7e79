package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options shape one control plane.
type Options struct {
	// Zones and NodesPerZone create Zones*NodesPerZone fake nodes named
	// kwok-<zone>-<i>, labelled topology.kubernetes.io/zone=zone-<n>.
	Zones, NodesPerZone int
	// InstallCRDs installs anthill's CRDs from manifests/ and waits until
	// they are established.
	InstallCRDs bool
	// Dir keeps state and logs; empty means a fresh temporary directory that
	// Stop removes (unless KeepDir).
	Dir     string
	KeepDir bool
	// Log receives one line per step; nil discards.
	Log io.Writer
	// AuditOperator gives the API server an audit webhook served by this
	// process that records every request the operator's service account
	// makes (ControlPlane.Audit).
	AuditOperator bool
	// NodeMonitorGrace is how long a fake node may go without renewing its
	// Lease before the node lifecycle controller marks it NotReady; kwok
	// renews every quarter of it. Zero keeps Kubernetes' 50 s and kwok's
	// 40 s Lease. Short values make node losses quick to see but leave
	// kwok little slack on a loaded machine: for tests that lose nodes.
	NodeMonitorGrace time.Duration
}

// ControlPlane is one running control plane.
type ControlPlane struct {
	// RestConfig authenticates as a cluster admin (system:masters).
	RestConfig *rest.Config
	// Kubeconfig is the path of a kubeconfig file with the same identity,
	// for kubectl and for the operator binary.
	Kubeconfig string
	// Client is a ready clientset for RestConfig.
	Client kubernetes.Interface
	// Dir holds etcd data, certificates and one log file per component.
	Dir string
	// Server is the API server's https URL.
	Server string
	// EtcdURL is the plain-http client URL of the control plane's etcd,
	// for tests that look at what the API server stored (EtcdGet).
	EtcdURL string
	// Audit records the operator's requests when Options.AuditOperator
	// is set; nil otherwise.
	Audit *AuditRecorder

	opts Options
	pki  *pki
	// mu guards procs and stopping: superviseStartup replaces a program
	// it starts again.
	mu       sync.Mutex
	procs    []*process
	stopping bool
	// restarted counts, per program, the runs superviseStartup started
	// again.
	restarted map[string]int
	stopOnce  sync.Once
	ownDir    bool
}

func (cp *ControlPlane) logf(format string, args ...any) {
	if cp.opts.Log != nil {
		fmt.Fprintf(cp.opts.Log, "framework: "+format+"\n", args...)
	}
}

// Start brings up etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok, waits until the API server is ready and the
// default service account exists, then creates the fake nodes and installs
// the CRDs. On any error everything started so far is stopped.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	if err := checkBinaries(bin); err != nil {
		return nil, err
	}
	cp := &ControlPlane{opts: opts, Dir: opts.Dir}
	if cp.Dir == "" {
		if cp.Dir, err = os.MkdirTemp("", "anthill-cp-"); err != nil {
			return nil, err
		}
		cp.ownDir = !opts.KeepDir
	}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()
	pki, err := newPKI(cp.Dir)
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	cp.pki = pki
	var auditFlags []string
	if opts.AuditOperator {
		cp.Audit = NewAuditRecorder(OperatorUser)
		if auditFlags, err = cp.Audit.serve(cp.Dir); err != nil {
			return nil, fmt.Errorf("audit webhook: %w", err)
		}
	}
	ports, err := freePorts(7)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	cp.Server = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	if err := cp.writeKubeconfig(pki); err != nil {
		return nil, err
	}

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	cp.EtcdURL = etcdURL
	if err := cp.start(bin, "etcd",
		"--name=default", "--data-dir="+filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		// Test data is disposable; skipping fsync keeps etcd fast on shared disks.
		"--unsafe-no-fsync=true", "--quota-backend-bytes=4294967296", "--log-level=warn",
	); err != nil {
		return nil, err
	}
	if err := cp.start(bin, "kube-apiserver", append([]string{
		"--etcd-servers=" + etcdURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + itoa(apiPort),
		"--tls-cert-file=" + pki.ServingCert, "--tls-private-key-file=" + pki.ServingKey,
		"--client-ca-file=" + pki.CACert, "--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.SAPub, "--service-account-signing-key-file=" + pki.SAKey,
		"--service-cluster-ip-range=10.0.0.0/16", "--allow-privileged=true",
		"--cert-dir=" + filepath.Join(cp.Dir, "apiserver-certs"),
		"--endpoint-reconciler-type=none", "--v=1",
		// As OpenShift does: an owner reference with blockOwnerDeletion
		// needs update on the owner's finalizers subresource, so the
		// operator's finalizers rules are in force here too.
		"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
		// No API priority and fairness: its per-request bookkeeping is CPU
		// the suite's two cores need, and one test's clients never crowd
		// out another's here.
		"--enable-priority-and-fairness=false",
	}, auditFlags...)...,
	); err != nil {
		return nil, err
	}
	if err := cp.waitAPIReady(ctx); err != nil {
		return nil, err
	}
	kcmArgs := []string{
		"--kubeconfig=" + cp.Kubeconfig, "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=" + itoa(kcmPort),
		"--service-account-private-key-file=" + pki.SAKey, "--root-ca-file=" + pki.CACert,
		"--use-service-account-credentials=false",
		"--controllers=*,-nodeipam",
		"--cluster-cidr=10.244.0.0/16", "--v=1",
	}
	nodeLease := 40 * time.Second
	if g := opts.NodeMonitorGrace; g > 0 {
		kcmArgs = append(kcmArgs, "--node-monitor-grace-period="+g.String(), "--node-monitor-period=2s")
		nodeLease = g
	}
	if err := cp.start(bin, "kube-controller-manager", kcmArgs...); err != nil {
		return nil, err
	}
	if err := cp.start(bin, "kube-scheduler",
		"--kubeconfig="+cp.Kubeconfig, "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+itoa(schedPort), "--v=1",
	); err != nil {
		return nil, err
	}
	if err := cp.start(bin, "kwok",
		"--kubeconfig="+cp.Kubeconfig, "--config="+filepath.Join(bin, "kwok-stages.yaml"),
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector="+FakeNodeAnnotation+"=fake",
		"--node-lease-duration-seconds="+itoa(int(nodeLease.Seconds())), "--cidr=10.244.0.0/16", "--node-ip=10.0.0.2",
		"--server-address=127.0.0.1:"+itoa(kwokPort),
	); err != nil {
		return nil, err
	}
	if err := cp.waitDefaultServiceAccount(ctx, metav1.NamespaceDefault); err != nil {
		return nil, fmt.Errorf("default service account: %w", err)
	}
	if opts.Zones > 0 && opts.NodesPerZone > 0 {
		if err := cp.CreateFakeNodes(ctx, opts.Zones, opts.NodesPerZone); err != nil {
			return nil, err
		}
	}
	if opts.InstallCRDs {
		if err := cp.InstallCRDs(ctx); err != nil {
			return nil, err
		}
	}
	cp.logf("control plane ready at %s (state in %s)", cp.Server, cp.Dir)
	return cp, nil
}

// controlPlaneEnv is what each control-plane program runs with beside the
// test's environment: a garbage collector that lets the heap grow four
// times its live size between collections (Go's default is twice). The
// suite runs a dozen control planes on two cores, where the apiservers'
// collections were a large share of its CPU; a test control plane's live
// heap is small, so memory is not what runs short.
var controlPlaneEnv = []string{"GOGC=400"}

func (cp *ControlPlane) start(bin, name string, args ...string) error {
	cp.logf("starting %s", name)
	p, err := startWatchedProcess(cp.Dir, filepath.Join(bin, name), name, nil, controlPlaneEnv, args...)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.procs = append(cp.procs, p)
	if cp.restarted == nil {
		cp.restarted = map[string]int{}
	}
	cp.mu.Unlock()
	if restartsOnStartupGiveUp[name] {
		go cp.superviseStartup(filepath.Join(bin, name), name, p, args)
	}
	return nil
}

// Healthy returns an error naming any component that has exited, with the
// tail of its log.
func (cp *ControlPlane) Healthy() error {
	var errs []error
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.procs {
		if done, werr := p.exited(); done && !cp.beingRestarted(p) {
			errs = append(errs, fmt.Errorf("%s %w (%v); log %s:\n%s", p.name, errExited, werr, p.logPath, tail(p.logPath, 20)))
		}
	}
	return errors.Join(errs...)
}

func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

func (cp *ControlPlane) writeKubeconfig(p *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["anthill-test"] = &clientcmdapi.Cluster{Server: cp.Server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.adminCertPEM, ClientKeyData: p.adminKeyPEM}
	cfg.Contexts["anthill-test"] = &clientcmdapi.Context{Cluster: "anthill-test", AuthInfo: "admin", Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = "anthill-test"
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, cp.Kubeconfig); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return err
	}
	// Tests create objects in bursts; the client-side default (5 qps) would
	// make them wait on the client, not on the server.
	rc.QPS, rc.Burst = 200, 400
	cp.RestConfig = rc
	cp.Client, err = kubernetes.NewForConfig(rc)
	return err
}

func (cp *ControlPlane) waitAPIReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return poll(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := cp.Healthy(); err != nil {
			return false, err
		}
		body, err := cp.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, fmt.Errorf("readyz: %w: %s", err, body)
		}
		return true, nil
	})
}

func (cp *ControlPlane) waitDefaultServiceAccount(ctx context.Context, ns string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return poll(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := cp.Healthy(); err != nil {
			return false, err
		}
		_, err := cp.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// Namespace creates a fresh namespace named after the test, waits for its
// default service account (pods cannot be created before it exists) and
// deletes it when the test ends.
func (cp *ControlPlane) Namespace(t TB) string {
	t.Helper()
	ns := cp.KeptNamespace(t)
	t.Cleanup(func() { cp.DeleteNamespace(ns) })
	return ns
}

// KeptNamespace is Namespace for a test that deletes the namespace itself
// (DeleteNamespace), when what runs in it is gone: a cleanup registered
// before the namespace was made would otherwise run after its deletion.
func (cp *ControlPlane) KeptNamespace(t TB) string {
	t.Helper()
	ctx := context.Background()
	begun := time.Now()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	created, err := cp.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if cp.Audit != nil {
		cp.Audit.TestBegins(t.Name(), created.Name, begun)
	}
	if err := cp.waitDefaultServiceAccount(ctx, created.Name); err != nil {
		cp.DeleteNamespace(created.Name)
		t.Fatalf("namespace %s: %v", created.Name, err)
	}
	return created.Name
}

// DeleteNamespace starts the deletion of namespace ns (best effort).
func (cp *ControlPlane) DeleteNamespace(ns string) {
	_ = cp.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
}

// TB is the part of testing.TB the framework needs.
type TB interface {
	Helper()
	Name() string
	Fatalf(format string, args ...any)
	Cleanup(func())
}

func namespacePrefix(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	return s + "-"
}

// Stop stops every process the control plane started, in reverse order,
// and removes its temporary directory. It is safe to call more than once.
func (cp *ControlPlane) Stop() {
	cp.stopOnce.Do(func() {
		cp.mu.Lock()
		cp.stopping = true
		procs := slices.Clone(cp.procs)
		cp.mu.Unlock()
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].stop(10 * time.Second)
		}
		if cp.Audit != nil {
			cp.Audit.close()
		}
		if cp.ownDir {
			_ = os.RemoveAll(cp.Dir)
		}
	})
}
