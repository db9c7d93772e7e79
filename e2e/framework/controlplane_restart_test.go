package framework

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeProgram writes an executable named name into dir that counts its
// runs in name.runs and, on each of its first giveUps runs, prints line
// and exits 1; later runs stay up.
func fakeProgram(t *testing.T, dir, name, line string, giveUps int) {
	t.Helper()
	script := "#!/bin/sh\n" +
		"n=$(cat \"$0.runs\" 2>/dev/null || echo 0); n=$((n+1)); echo $n >\"$0.runs\"\n" +
		"if [ $n -le " + strconv.Itoa(giveUps) + " ]; then echo '" + line + "'; exit 1; fi\n" +
		"exec sleep 60\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func runsOf(dir, name string) int {
	b, _ := os.ReadFile(filepath.Join(dir, name+".runs"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// A controller manager that gave up on a slow API server at start-up is
// started again, as the kubelet restarts a static pod, and the control
// plane stays healthy; one that exits for any other reason, or gives up
// more than startupRestarts times, is reported by Healthy.
func TestAControllerManagerThatGaveUpAtStartupIsStartedAgain(t *testing.T) {
	const kcm = "kube-controller-manager"
	for _, tc := range []struct {
		name     string
		line     string
		exits    int
		wantRuns int
		healthy  bool
	}{
		{"gave up twice, then up", "E1207 controllermanager.go:567] failed to wait for apiserver being healthy: timed out", 2, 3, true},
		{"gave up more often than it is restarted", "failed to wait for apiserver being healthy: timed out", 9, startupRestarts + 1, false},
		{"exited for another reason", "unknown flag: --nope", 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, dir := t.TempDir(), t.TempDir()
			fakeProgram(t, bin, kcm, tc.line, tc.exits)
			cp := &ControlPlane{Dir: dir}
			if err := cp.start(bin, kcm); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cp.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := poll(ctx, 50*time.Millisecond, func(context.Context) (bool, error) {
				if runsOf(bin, kcm) < tc.wantRuns {
					return false, nil
				}
				cp.mu.Lock()
				p := cp.procs[0]
				cp.mu.Unlock()
				done, _ := p.exited()
				return done != tc.healthy, nil
			})
			if err != nil {
				t.Fatalf("runs %d (want %d): %v", runsOf(bin, kcm), tc.wantRuns, err)
			}
			if got := runsOf(bin, kcm); got != tc.wantRuns {
				t.Fatalf("ran %d times, want %d", got, tc.wantRuns)
			}
			if err := cp.Healthy(); (err == nil) != tc.healthy {
				t.Fatalf("Healthy() = %v, want healthy %t", err, tc.healthy)
			}
		})
	}
}
