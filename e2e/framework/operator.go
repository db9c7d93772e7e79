package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Operator is the anthill operator running as a child process against a
// control plane. Tests kill it with SIGKILL mid-flight and start it again.
type Operator struct {
	bin, kubeconfig, dir string
	// base are the arguments every run takes (leader election); args
	// the caller's (SetArgs replaces them).
	base, args []string
	env        []string
	mu         sync.Mutex
	proc       *process
	runs       int

	// trigMu guards trig, apart from mu: the output goroutine takes it
	// while Kill holds mu waiting for that goroutine to finish.
	trigMu sync.Mutex
	trig   *killTrigger
}

// killTrigger is an armed KillOnLine.
type killTrigger struct {
	match func(line []byte) bool
	fired chan string
}

// StartOperator installs the operator's shipped RBAC and runs `anthill
// operator` as its service account, with leader election on a Lease in the
// operator's namespace as the Deployment does, plus args. A fixed identity
// lets a run started after a SIGKILL take the Lease over at once instead of
// waiting for it to expire. Its JSON log goes to <cp.Dir>/operator-<n>.log,
// one file per run.
func (cp *ControlPlane) StartOperator(ctx context.Context, bin string, args ...string) (*Operator, error) {
	kubeconfig, err := cp.InstallOperatorRBAC(ctx)
	if err != nil {
		return nil, err
	}
	base := []string{"--leader-elect=true", "--leader-election-namespace=" + OperatorNamespace, "--identity=" + OperatorIdentity}
	o := &Operator{bin: bin, kubeconfig: kubeconfig, dir: cp.Dir, base: base, args: args}
	return o, o.Start()
}

// StartOperatorAs runs a second operator beside the one StartOperator
// started, as a rolling update of the Deployment does for a while: the
// same RBAC and Lease, its own leader-election identity, and its logs in
// <cp.Dir>/<identity>/.
func (cp *ControlPlane) StartOperatorAs(ctx context.Context, bin, identity string, args ...string) (*Operator, error) {
	kubeconfig, err := cp.InstallOperatorRBAC(ctx)
	if err != nil {
		return nil, err
	}
	return cp.StartOperatorWith(kubeconfig, bin, identity, args...)
}

// StartOperatorWith is StartOperatorAs under the identity kubeconfig
// gives (InstallNamespacedOperatorRBAC's, say).
func (cp *ControlPlane) StartOperatorWith(kubeconfig, bin, identity string, args ...string) (*Operator, error) {
	dir := filepath.Join(cp.Dir, identity)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := []string{"--leader-elect=true", "--leader-election-namespace=" + OperatorNamespace, "--identity=" + identity}
	o := &Operator{bin: bin, kubeconfig: kubeconfig, dir: dir, base: base, args: args}
	return o, o.Start()
}

// SetEnv gives every later run of the operator env ("NAME=value") on top
// of the test process's own environment; SetEnv() goes back to that alone.
// make bench-scale sets GOMEMLIMIT this way, for the operator only.
func (o *Operator) SetEnv(env ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.env = env
}

// SetArgs replaces the arguments later runs take after the leader
// election's (the test's namespaces and Lease, say).
func (o *Operator) SetArgs(args ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.args = args
}

// Args are the arguments later runs take after the leader election's.
func (o *Operator) Args() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.args)
}

// Start starts a new run of the operator (after Kill or Stop).
func (o *Operator) Start() error { return o.StartWith() }

// StartWith starts a new run, as Start does, with extra arguments for this
// run only (a later Start goes back to the operator's own).
func (o *Operator) StartWith(extra ...string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc != nil {
		if done, _ := o.proc.exited(); !done {
			return fmt.Errorf("operator already running")
		}
	}
	o.runs++
	args := append([]string{"operator", "--kubeconfig=" + o.kubeconfig, "--metrics-address=127.0.0.1:0", "--log-level=debug"}, o.base...)
	args = append(append(args, o.args...), extra...)
	p, err := startWatchedProcess(o.dir, o.bin, fmt.Sprintf("operator-%d", o.runs), o.onLine, o.env, args...)
	if err != nil {
		return err
	}
	o.proc = p
	return nil
}

// KillOnLine arms a one-shot trigger: the first line the operator writes
// from now on (in this run or a later one) for which match returns true
// kills the run with SIGKILL at once, from the goroutine that reads its
// output, before the next line is read. The operator gets no further than
// what it does between writing the line and its being read, a matter of
// microseconds. The line is sent on fired; the caller then calls Kill
// (which returns once the run has ended) and Start. disarm cancels a
// trigger that has not fired. match runs on the output goroutine and must
// be quick.
func (o *Operator) KillOnLine(match func(line []byte) bool) (fired <-chan string, disarm func()) {
	t := &killTrigger{match: match, fired: make(chan string, 1)}
	o.trigMu.Lock()
	o.trig = t
	o.trigMu.Unlock()
	return t.fired, func() {
		o.trigMu.Lock()
		defer o.trigMu.Unlock()
		if o.trig == t {
			o.trig = nil
		}
	}
}

func (o *Operator) onLine(p *process, line []byte) {
	o.trigMu.Lock()
	defer o.trigMu.Unlock()
	t := o.trig
	if t == nil || !t.match(line) {
		return
	}
	o.trig = nil
	if pid := p.cmd.Process.Pid; pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	t.fired <- string(line)
}

// Kill ends the operator with SIGKILL, as a node failure or OOM would:
// nothing gets to clean up.
func (o *Operator) Kill() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		return
	}
	_ = syscall.Kill(-o.proc.cmd.Process.Pid, syscall.SIGKILL)
	<-o.proc.done
}

// Stop ends the operator gracefully.
func (o *Operator) Stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc != nil {
		o.proc.stop(10 * time.Second)
	}
}

// Exited reports whether the current run has ended, with its error.
func (o *Operator) Exited() (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		return true, nil
	}
	return o.proc.exited()
}

// Kubeconfig is the path of the kubeconfig the operator runs with.
func (o *Operator) Kubeconfig() string { return o.kubeconfig }

// LogPaths lists the log file of every run so far.
func (o *Operator) LogPaths() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for i := 1; i <= o.runs; i++ {
		out = append(out, filepath.Join(o.dir, fmt.Sprintf("operator-%d.log", i)))
	}
	return out
}

// Logs returns the concatenated logs of every run.
func (o *Operator) Logs() string {
	var s string
	for _, p := range o.LogPaths() {
		b, _ := os.ReadFile(p)
		s += string(b)
	}
	return s
}

// WaitExit waits for the current run to end or ctx to expire.
func (o *Operator) WaitExit(ctx context.Context) error {
	o.mu.Lock()
	p := o.proc
	o.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HTTPAddress is the address the current run serves /metrics, /healthz
// and /readyz on (it listens on port 0), read from its "serving health and
// metrics" log line; it waits up to timeout for the line.
func (o *Operator) HTTPAddress(ctx context.Context, timeout time.Duration) (string, error) {
	o.mu.Lock()
	path := filepath.Join(o.dir, fmt.Sprintf("operator-%d.log", o.runs))
	o.mu.Unlock()
	var addr string
	err := WaitFor(ctx, timeout, func(context.Context) (bool, error) {
		b, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(b), "\n") {
			var l struct {
				Msg     string `json:"msg"`
				Address string `json:"address"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving health and metrics" && l.Address != "" {
				addr = l.Address
				return true, nil
			}
		}
		return false, fmt.Errorf("no \"serving health and metrics\" line in %s", path)
	})
	return addr, err
}

// UseBinary makes every later Start run bin: a test that hands the
// cluster from one operator build to another (a release to the current
// one) kills the running operator, switches and starts again.
func (o *Operator) UseBinary(bin string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bin = bin
}

// Binary is the binary the next Start runs.
func (o *Operator) Binary() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bin
}
