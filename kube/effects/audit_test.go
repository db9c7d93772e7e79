package effects

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/transitions"
)

// stubGD2 answers ReplaceBrick and DeletePeer; any other call panics.
type stubGD2 struct {
	transitions.GD2Ops
	err error
}

func (s stubGD2) ReplaceBrick(context.Context, string, string, string, transitions.MoveTo) error {
	return s.err
}

func (s stubGD2) DeletePeer(context.Context, string) error { return s.err }

func TestAuditLogsEachConfigurationChangeWithItsWhy(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	a := Audit{Log: zap.New(core)}
	ctx := engine.WithAction(context.Background(), engine.ActionContext{
		Machine: "node", Namespace: "ns", Name: "gluster-zone-1-0", State: "Draining", Action: "moveBrick", Reason: "Decommissioning",
	})
	ops := a.Ops(transitions.Ops{GD2: stubGD2{}})
	if err := ops.GD2.ReplaceBrick(ctx, "vol1", "peer-a", "/bricks/vol1/brick1", transitions.MoveTo{Peers: []string{"peer-b"}}); err != nil {
		t.Fatal(err)
	}
	failing := a.Ops(transitions.Ops{GD2: stubGD2{err: errors.New("peer is not alive")}})
	if err := failing.GD2.DeletePeer(ctx, "peer-a"); err == nil {
		t.Fatal("the wrapped error was lost")
	}
	entries := logs.All()
	if len(entries) != 4 {
		t.Fatalf("%d log lines, want 4 (started and outcome for each call): %v", len(entries), entries)
	}
	// Each call is announced before it is made, so a crash between the
	// call and its outcome line still leaves the change in the log.
	for i, want := range []string{ActionReplaceBrick, ActionDeletePeer} {
		if l := entries[2*i].ContextMap(); l[engine.LogAction] != want || l[engine.LogOutcome] != OutcomeStarted || entries[2*i].Level != zapcore.InfoLevel {
			t.Errorf("line %d: %v at %v, want %s started at info", 2*i, l, entries[2*i].Level, want)
		}
	}
	entries = []observer.LoggedEntry{entries[1], entries[3]}
	move := entries[0].ContextMap()
	for k, want := range map[string]any{
		engine.LogAction: ActionReplaceBrick, engine.LogMachine: "node", engine.LogName: "gluster-zone-1-0",
		engine.LogState: "Draining", engine.LogStep: "moveBrick", engine.LogReason: "Decommissioning",
		engine.LogVolume: "vol1", engine.LogPeer: "peer-a", engine.LogBrick: "/bricks/vol1/brick1", engine.LogOutcome: "ok",
	} {
		if move[k] != want {
			t.Errorf("replace-brick line: %s = %v, want %v (line %v)", k, move[k], want, move)
		}
	}
	if entries[0].Message != MessageConfigurationChange || entries[1].Level != zapcore.WarnLevel {
		t.Errorf("lines: %q at %v, %q at %v", entries[0].Message, entries[0].Level, entries[1].Message, entries[1].Level)
	}
	if del := entries[1].ContextMap(); del[engine.LogAction] != ActionDeletePeer || del[engine.LogOutcome] != "failed" || del[engine.LogError] != "peer is not alive" {
		t.Errorf("failed delete-peer line: %v", del)
	}
}
