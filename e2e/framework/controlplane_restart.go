package framework

import (
	"fmt"
	"os"
	"strings"
)

// startupGiveUp is what a controller manager logs when it gives up on the
// API server at start-up: it waits only 10 s for the apiserver's /healthz
// before it exits (k8s.io/controller-manager's WaitForAPIServer). On a
// machine whose every core is busy compiling (a first `make test`), an
// apiserver that has just passed /readyz can take longer than that to
// answer, and a control plane without its controller manager runs no
// Deployment, StatefulSet or garbage collection: a Deployment then never
// gets a status (ObservedGeneration 0) however long a test waits.
const startupGiveUp = "failed to wait for apiserver being healthy"

// startupRestarts bounds how often a program that gave up at start-up is
// started again.
const startupRestarts = 3

// restartsOnStartupGiveUp names the programs started again when they exit
// having given up on the API server at start-up, as the kubelet restarts a
// control plane's static pods.
var restartsOnStartupGiveUp = map[string]bool{"kube-controller-manager": true}

// superviseStartup starts name again, with the same arguments, each time
// p exits having logged startupGiveUp, at most startupRestarts times and
// never once the control plane is stopping. Each run keeps its log: the
// one that gave up is renamed <name>-<run>.log. Any other exit is left for
// Healthy to report.
func (cp *ControlPlane) superviseStartup(bin, name string, p *process, args []string) {
	for run := 1; run <= startupRestarts; run++ {
		<-p.done
		if !gaveUpAtStartup(p) {
			return
		}
		cp.mu.Lock()
		if cp.stopping {
			cp.mu.Unlock()
			return
		}
		cp.restarted[name] = run
		_ = os.Rename(p.logPath, strings.TrimSuffix(p.logPath, ".log")+fmt.Sprintf("-%d.log", run))
		next, err := startWatchedProcess(cp.Dir, bin, name, nil, controlPlaneEnv, args...)
		if err != nil {
			cp.mu.Unlock()
			cp.logf("%s gave up on the API server at start-up and could not be started again: %v", name, err)
			return
		}
		for i := range cp.procs {
			if cp.procs[i] == p {
				cp.procs[i] = next
			}
		}
		cp.mu.Unlock()
		cp.logf("%s gave up on the API server at start-up (%s); started it again (run %d)", name, startupGiveUp, run+1)
		p = next
	}
}

// gaveUpAtStartup reports whether p's log says it gave up on the API
// server at start-up.
func gaveUpAtStartup(p *process) bool {
	b, _ := os.ReadFile(p.logPath)
	return strings.Contains(string(b), startupGiveUp)
}

// beingRestarted reports whether p, which has exited, is one that
// superviseStartup is about to start again: Healthy does not count it as a
// failed component. Called with cp.mu held.
func (cp *ControlPlane) beingRestarted(p *process) bool {
	return restartsOnStartupGiveUp[p.name] && !cp.stopping && cp.restarted[p.name] < startupRestarts && gaveUpAtStartup(p)
}
