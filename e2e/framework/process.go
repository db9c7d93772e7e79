package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// process is one control-plane program the framework started. Its output
// goes to <dir>/<name>.log so a failing test can point at it.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

func startProcess(dir, bin, name string, args ...string) (*process, error) {
	return startWatchedProcess(dir, bin, name, nil, nil, args...)
}

// startWatchedProcess is startProcess that also hands each complete line
// the program writes (stdout and stderr, without the newline) to onLine as
// it is read, before the next one is: a test reacts to a log line within
// moments of its being written. onLine runs on the goroutine that copies
// the output, so it must not wait for the process to end; it may signal
// the process (p.cmd.Process is set by then).
//
// env, when not empty, is added to the test process's own environment for
// the program; otherwise it inherits that environment as it is.
func startWatchedProcess(dir, bin, name string, onLine func(p *process, line []byte), env []string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = logf, logf
	if onLine != nil {
		// One writer for both streams: exec then copies them on one
		// goroutine, so lines arrive whole and in order.
		w := io.MultiWriter(logf, &lineWriter{onLine: func(l []byte) { onLine(p, l) }})
		cmd.Stdout, cmd.Stderr = w, w
	}
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	// Own process group, so Stop can signal the program and anything it
	// forks; Pdeathsig kills it if the test binary dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, with its wait error.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if done, _ := p.exited(); done {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// freePorts returns n ports no one listens on, for the control plane's
// processes to bind. They are taken below the kernel's ephemeral range
// (ip_local_port_range): a port the kernel handed out for a moment, as
// 127.0.0.1:0 does, is free again once its listener closes, and the next
// outgoing connection of any test may take it before the process that
// was to listen there starts (kwok, the last, once found its port taken).
// Below the range, only another caller of freePorts could pick the same
// port, and each checks that it can listen there first. The top of that
// span (brickBand) is left to real GD2's bricks, which take their ports
// later, one by one, without asking here (freePortRange).
func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	low := ephemeralLow() - brickBand
	const first = 10000
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n && tries < 1000; tries++ {
		addr := "127.0.0.1:0"
		if low > first+n {
			addr = "127.0.0.1:" + strconv.Itoa(first+rand.IntN(low-first))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("found only %d of %d free ports", len(ports), n)
	}
	return ports, nil
}

// brickBand is how many ports just below the kernel's ephemeral range
// real GD2 pools' bricks take their ports from (freePortRange), and
// freePorts never hands out: a brick binds its port seconds after the
// pool chose the band, and a control plane started meanwhile once found
// the port its scheduler was given taken.
const brickBand = 5000

// ephemeralLow is the lowest port of the kernel's ephemeral range, 0 when
// it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil {
		return 0
	}
	return low
}

// poll calls fn every interval until it returns true, returns an error, or
// ctx ends. It is the framework's only way to wait: bounded, no fixed sleeps.
func poll(ctx context.Context, interval time.Duration, fn func(context.Context) (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		ok, err := fn(ctx)
		if ok {
			return nil
		}
		// Once the context has ended, a call fails for that reason alone:
		// the error of the call before says what was awaited.
		if ctx.Err() == nil || last == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

var errExited = errors.New("process exited")

func itoa(i int) string { return strconv.Itoa(i) }

// lineWriter splits what is written to it into lines for onLine, keeping a
// partial last line until its newline arrives.
type lineWriter struct {
	onLine func([]byte)
	buf    []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.onLine(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) == 0 {
		w.buf = nil
	}
	return len(b), nil
}
