package gd2_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
)

// The strict contract: the refusals that make a real GD2 hard to drive
// (fact sheet §3 liveness gate, §5 option validation, §6 heal, §7
// replace-brick, §4 peer-add spelling), run against the simulator over HTTP.
// Requests that must reach one particular node go through nodeClient: the
// Host header names the simulated host while the connection goes to the
// simulator's listener (Options.DialAddress), as the operator reaches a
// pod behind its Service name.

// simMissing lists strict behaviours the simulator does not have yet; a
// subtest that needs one is skipped with its name. Empty it as the
// simulator catches up.
var simMissing = map[string]bool{}

func needsSim(t *testing.T, behaviours ...string) {
	t.Helper()
	for _, b := range behaviours {
		if simMissing[b] {
			t.Skipf("simulator lacks: %s", b)
		}
	}
}

// Strict simulator behaviours the subtests rely on.
const (
	simHostRouting    = "routing a request to the host its Host header names, and no answer from a dead host"
	simLivenessGate   = "the v1 liveness gate: 500 node <id> is probably down on replace-brick, expand, options and heal trigger"
	simServingSize    = "replace-brick sized on the serving node: 500 code 2 in brick-replace.PrepareBricks off the source node"
	simOptionCode2    = "volume option set validation as 500 code 2 from vol-option.Validate"
	simV2NodesDown    = "the v2 engine's 500 probably some of the nodes are down on volume create and stop"
	simHealDistribute = "heal trigger on a distribute volume answering 400 self heal option is disabled"
	simPeerSpelling   = "peer add duplicate detection on the exact host:port spelling (another spelling: 500 peer is part of another cluster)"
)

// strictVolume is a started smart replica-3 volume on three of four
// single-zone peers, all with devices: the fourth peer (free) is the only
// place a replaced brick can go.
type strictVolume struct {
	e       *env
	vol     *gd2.Volume
	holders []gd2.Peer // the peer of each brick, in brick order
	free    gd2.Peer   // the peer without a brick of the volume
}

func newStrictVolume(t *testing.T) *strictVolume {
	t.Helper()
	e := newEnv(t, func(c *sim.Config) { c.Peers, c.Zones = 4, 4 })
	e.addDevices()
	e.smartReplica3("vol1", GiB)
	e.start("vol1")
	v, err := e.c.GetVolume(bg, "vol1")
	e.must(err, "get vol1")
	s := &strictVolume{e: e, vol: v}
	byID := map[string]gd2.Peer{}
	for _, p := range e.peers {
		byID[p.ID] = p
	}
	for _, b := range v.Bricks() {
		s.holders = append(s.holders, byID[b.PeerID])
		delete(byID, b.PeerID)
	}
	if len(s.holders) != 3 || len(byID) != 1 {
		t.Fatalf("want 3 bricks on 3 of 4 peers, got %d bricks and %d free peers", len(s.holders), len(byID))
	}
	for _, p := range byID {
		s.free = p
	}
	return s
}

// replace asks client c to move brick i of vol1.
func (s *strictVolume) replace(c *gd2.Client, i int) error {
	b := s.vol.Bricks()[i]
	_, err := c.ReplaceBrick(bg, "vol1", gd2.ReplaceBrickRequest{SrcPeerID: b.PeerID, SrcBrickPath: b.Path})
	return err
}

// unchanged checks vol1 still has the bricks it was created with.
func (s *strictVolume) unchanged(t *testing.T) {
	t.Helper()
	v, err := s.e.c.GetVolume(bg, "vol1")
	s.e.must(err, "get vol1")
	if !slices.Equal(v.Bricks(), s.vol.Bricks()) {
		t.Errorf("a refused call changed the bricks:\nbefore %+v\nafter  %+v", s.vol.Bricks(), v.Bricks())
	}
}

func (s *strictVolume) kill(p gd2.Peer) {
	s.e.t.Helper()
	s.e.must(s.e.sim.SetPeerAlive(p.ID, false), "take "+p.Name+" down")
}

// refused checks err is GD2's answer status to op and matches every
// sentinel in want and none in not.
func refused(t *testing.T, e *env, err error, op gd2.Operation, status int, want, not []error) {
	t.Helper()
	var apiErr *gd2.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != status || apiErr.Op != op {
		t.Fatalf("want *APIError{Status:%d Op:%s}, got %v", status, op, err)
	}
	if got := e.log.statuses(op); len(got) == 0 || got[len(got)-1] != status {
		t.Errorf("observed statuses %v, want last %d", got, status)
	}
	for _, s := range want {
		if !errors.Is(err, s) {
			t.Errorf("does not match %v: %v", s, err)
		}
	}
	for _, s := range not {
		if errors.Is(err, s) {
			t.Errorf("matches %v but must not: %v", s, err)
		}
	}
}

// downNodeIs checks the v1 liveness refusal names peer p.
func downNodeIs(t *testing.T, err error, p gd2.Peer) {
	t.Helper()
	if id, ok := gd2.DownNode(err); !ok || id != p.ID {
		t.Errorf("DownNode = %q, %v; want %s (%s)", id, ok, p.ID, p.Name)
	}
}

var nodeDownNot = []error{gd2.ErrTxnStepFailed, gd2.ErrNoCapacity, gd2.ErrBrickPrepareFailed, gd2.ErrPeerNotAlive}

func TestContractStrictReplaceBrick(t *testing.T) {
	t.Run("replace-brick served by the source brick's own node answers 200 and moves the brick to the free peer", func(t *testing.T) {
		needsSim(t, simHostRouting)
		s := newStrictVolume(t)
		src := s.holders[0]
		if err := s.replace(s.e.nodeClient(src.Name), 0); err != nil {
			t.Fatalf("replace-brick on %s: %v", src.Name, err)
		}
		v, err := s.e.c.GetVolume(bg, "vol1")
		s.e.must(err, "get vol1")
		if nb := v.Bricks()[0]; nb.PeerID != s.free.ID || nb.Path != s.vol.Bricks()[0].Path {
			t.Errorf("new brick %+v, want on %s at the same path", nb, s.free.Name)
		}
	})
	t.Run("replace-brick of a brick whose node is down is 500 node <id> is probably down naming it, nothing changed", func(t *testing.T) {
		needsSim(t, simHostRouting, simLivenessGate)
		s := newStrictVolume(t)
		s.kill(s.holders[0])
		err := s.replace(s.e.nodeClient(s.holders[1].Name), 0)
		refused(t, s.e, err, gd2.OpVolumesReplaceBrick, 500, []error{gd2.ErrNodeDown}, nodeDownNot)
		downNodeIs(t, err, s.holders[0])
		s.unchanged(t)
	})
	t.Run("replace-brick of a live brick while another node of the volume is down is 500 naming the dead node", func(t *testing.T) {
		needsSim(t, simHostRouting, simLivenessGate)
		s := newStrictVolume(t)
		s.kill(s.holders[2])
		err := s.replace(s.e.nodeClient(s.holders[0].Name), 0)
		refused(t, s.e, err, gd2.OpVolumesReplaceBrick, 500, []error{gd2.ErrNodeDown}, nodeDownNot)
		downNodeIs(t, err, s.holders[2])
		s.unchanged(t)
	})
	t.Run("replace-brick while only the free peer is down is 500 no capacity: the planner skips offline peers", func(t *testing.T) {
		s := newStrictVolume(t)
		s.kill(s.free)
		// The planner only offers devices of online peers, so GD2 refuses
		// for capacity before its liveness gate runs.
		err := s.replace(s.e.nodeClient(s.holders[0].Name), 0)
		refused(t, s.e, err, gd2.OpVolumesReplaceBrick, 500, []error{gd2.ErrNoCapacity}, []error{gd2.ErrTxnStepFailed, gd2.ErrNodeDown})
		s.unchanged(t)
	})
	for _, served := range []struct{ name, by string }{
		{"another brick's node", "holder"}, {"the peer the new brick goes to", "free"},
	} {
		t.Run("replace-brick served by "+served.name+" fails with 500 code 2 in brick-replace.PrepareBricks on the target, not for capacity", func(t *testing.T) {
			needsSim(t, simHostRouting, simServingSize)
			s := newStrictVolume(t)
			via := s.holders[1]
			if served.by == "free" {
				via = s.free
			}
			err := s.replace(s.e.nodeClient(via.Name), 0)
			refused(t, s.e, err, gd2.OpVolumesReplaceBrick, 500,
				[]error{gd2.ErrTxnStepFailed, gd2.ErrBrickPrepareFailed}, []error{gd2.ErrNoCapacity, gd2.ErrNodeDown})
			steps := gd2.TxnSteps(err)
			if len(steps) != 1 || steps[0].Step != gd2.StepReplaceBrickPrepareBricks || steps[0].PeerID != s.free.ID || steps[0].Error == "" {
				t.Errorf("TxnSteps = %+v, want one %s failure on %s", steps, gd2.StepReplaceBrickPrepareBricks, s.free.Name)
			}
			if _, ok := gd2.DownNode(err); ok {
				t.Error("a step failure names no down node")
			}
			s.unchanged(t)
		})
	}
	t.Run("a request to a dead node gets no answer at all", func(t *testing.T) {
		needsSim(t, simHostRouting)
		s := newStrictVolume(t)
		s.kill(s.holders[0])
		_, err := s.e.nodeClient(s.holders[0].Name).GetVolume(bg, "vol1")
		var apiErr *gd2.APIError
		if !errors.Is(err, gd2.ErrNoResponse) || errors.As(err, &apiErr) {
			t.Fatalf("want ErrNoResponse from a dead host, got %v", err)
		}
	})
}

func TestContractStrictLivenessGate(t *testing.T) {
	t.Run("an in-place expand with a peer down that holds no brick is 500 naming it, nothing changed", func(t *testing.T) {
		needsSim(t, simLivenessGate)
		s := newStrictVolume(t)
		s.kill(s.free)
		_, err := s.e.c.ExpandVolume(bg, "vol1", gd2.VolumeExpandRequest{Size: GiB, Distribute: 1})
		refused(t, s.e, err, gd2.OpVolumesExpand, 500, []error{gd2.ErrNodeDown}, nodeDownNot)
		downNodeIs(t, err, s.free)
		v, gerr := s.e.c.GetVolume(bg, "vol1")
		s.e.must(gerr, "get vol1")
		if v.Capacity != s.vol.Capacity {
			t.Errorf("capacity %d, want %d", v.Capacity, s.vol.Capacity)
		}
	})
	t.Run("setting a volume option with a peer down that holds no brick is 500 naming it", func(t *testing.T) {
		needsSim(t, simLivenessGate)
		s := newStrictVolume(t)
		s.kill(s.free)
		_, err := s.e.c.SetVolumeOptions(bg, "vol1", gd2.VolumeOptionRequest{Options: map[string]string{"cluster/replicate.quorum-type": "fixed"}})
		refused(t, s.e, err, gd2.OpVolumesOptionsSet, 500, []error{gd2.ErrNodeDown}, append([]error{gd2.ErrInvalidOption}, nodeDownNot...))
		downNodeIs(t, err, s.free)
		v, gerr := s.e.c.GetVolume(bg, "vol1")
		s.e.must(gerr, "get vol1")
		if v.Options["cluster/replicate.quorum-type"] == "fixed" {
			t.Error("the refused option was set")
		}
	})
	t.Run("resetting volume options with a peer down is 500 naming it", func(t *testing.T) {
		needsSim(t, simLivenessGate)
		s := newStrictVolume(t)
		s.kill(s.free)
		err := s.e.c.ResetVolumeOptions(bg, "vol1", gd2.VolumeOptionResetRequest{Options: []string{"cluster/replicate.quorum-type"}})
		refused(t, s.e, err, gd2.OpVolumesOptionsReset, 500, []error{gd2.ErrNodeDown}, nodeDownNot)
		downNodeIs(t, err, s.free)
	})
	t.Run("a heal trigger with a brick's node down is 500 naming it", func(t *testing.T) {
		needsSim(t, simLivenessGate)
		s := newStrictVolume(t)
		s.e.enableSelfHeal("vol1")
		s.kill(s.holders[1])
		err := s.e.c.Heal(bg, "vol1", gd2.HealIndex)
		refused(t, s.e, err, gd2.OpHealTrigger, 500, []error{gd2.ErrNodeDown}, append([]error{gd2.ErrSelfHealDisabled}, nodeDownNot...))
		downNodeIs(t, err, s.holders[1])
	})
	t.Run("a heal trigger with only a brick-less peer down answers 200", func(t *testing.T) {
		s := newStrictVolume(t)
		s.e.enableSelfHeal("vol1")
		s.kill(s.free)
		if err := s.e.c.Heal(bg, "vol1", gd2.HealIndex); err != nil {
			t.Fatalf("heal needs only the nodes holding bricks: %v", err)
		}
	})
	t.Run("stopping a volume with a brick's node down is the v2 refusal, which names no node", func(t *testing.T) {
		needsSim(t, simV2NodesDown)
		s := newStrictVolume(t)
		s.kill(s.holders[0])
		_, err := s.e.c.StopVolume(bg, "vol1")
		refused(t, s.e, err, gd2.OpVolumesStop, 500, []error{gd2.ErrNodeDown}, nodeDownNot)
		if id, ok := gd2.DownNode(err); ok {
			t.Errorf("DownNode = %q for the v2 text", id)
		}
	})
	t.Run("creating a volume with a brick on a dead peer is the v2 refusal", func(t *testing.T) {
		needsSim(t, simV2NodesDown)
		e := newEnv(t)
		e.must(e.sim.SetPeerAlive(e.peers[2].ID, false), "down")
		_, err := e.c.CreateVolume(bg, e.manualReq("vol2", 1))
		refused(t, e, err, gd2.OpVolumesCreate, 500, []error{gd2.ErrNodeDown}, nodeDownNot)
		if _, ok := gd2.DownNode(err); ok {
			t.Error("the v2 text names no node")
		}
	})
	t.Run("deleting a dead peer stays peer is not alive, not a down transaction node", func(t *testing.T) {
		e := newEnv(t)
		e.must(e.sim.SetPeerAlive(e.peers[2].ID, false), "down")
		err := e.c.DeletePeer(bg, e.peers[2].ID)
		refused(t, e, err, gd2.OpPeersDelete, 500, []error{gd2.ErrPeerNotAlive}, []error{gd2.ErrNodeDown})
	})
}

func TestContractStrictOptions(t *testing.T) {
	for _, tc := range []struct {
		name, key, errText string
	}{
		{"setting an unknown volume option is 500 code 2 from vol-option.Validate", "no.such-option",
			"validation failed for volume option: option not found: no.such-option"},
		{"setting an advanced volume option without its flag is 500 code 2 from vol-option.Validate", "cluster/replicate.self-heal-daemon",
			"validation failed for volume option: option cluster/replicate.self-heal-daemon is an advanced option"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needsSim(t, simOptionCode2)
			e := newEnv(t)
			e.manualReplica3("vol1")
			_, err := e.c.SetVolumeOptions(bg, "vol1", gd2.VolumeOptionRequest{Options: map[string]string{tc.key: "on"}})
			refused(t, e, err, gd2.OpVolumesOptionsSet, 500, []error{gd2.ErrInvalidOption, gd2.ErrTxnStepFailed},
				[]error{gd2.ErrBadRequest, gd2.ErrBrickPrepareFailed, gd2.ErrNodeDown})
			steps := gd2.TxnSteps(err)
			if len(steps) != 1 || steps[0].Step != gd2.StepVolOptionValidate || !strings.HasPrefix(steps[0].Error, tc.errText) || steps[0].PeerID == "" {
				t.Errorf("TxnSteps = %+v, want one %s failure starting %q", steps, gd2.StepVolOptionValidate, tc.errText)
			}
		})
	}
	t.Run("creating a volume with an unknown option is 400 without the prefix", func(t *testing.T) {
		e := newEnv(t)
		req := e.manualReq("vol1", 1)
		req.Options = map[string]string{"no.such-option": "on"}
		_, err := e.c.CreateVolume(bg, req)
		refused(t, e, err, gd2.OpVolumesCreate, 400, []error{gd2.ErrInvalidOption, gd2.ErrBadRequest}, []error{gd2.ErrTxnStepFailed})
	})
}

func TestContractStrictHeal(t *testing.T) {
	distribute := func(t *testing.T) *env {
		e := newEnv(t)
		_, err := e.c.CreateVolume(bg, gd2.VolumeCreateRequest{Name: "dist", Subvols: []gd2.SubvolRequest{{
			Type:   gd2.SubvolReqDistribute,
			Bricks: []gd2.BrickRequest{{PeerID: e.peers[0].ID, Path: "/bricks/dist/b0"}, {PeerID: e.peers[1].ID, Path: "/bricks/dist/b1"}},
		}}})
		e.must(err, "create dist")
		e.start("dist")
		return e
	}
	t.Run("a heal trigger on a distribute volume is 400 self heal option is disabled", func(t *testing.T) {
		needsSim(t, simHealDistribute)
		e := distribute(t)
		err := e.c.Heal(bg, "dist", gd2.HealIndex)
		refused(t, e, err, gd2.OpHealTrigger, 400, []error{gd2.ErrSelfHealDisabled, gd2.ErrBadRequest}, []error{gd2.ErrNodeDown})
	})
	t.Run("heal info on a distribute volume is 400 invalid operation for this volume type", func(t *testing.T) {
		e := distribute(t)
		_, err := e.c.HealInfo(bg, "dist", gd2.HealInfoSummary)
		refused(t, e, err, gd2.OpHealInfo, 400, []error{gd2.ErrUnsupportedVolumeType, gd2.ErrBadRequest}, nil)
	})
	t.Run("a heal trigger with the daemon off on a replicate volume is 400", func(t *testing.T) {
		e := newEnv(t)
		e.manualReplica3("vol1")
		e.start("vol1")
		err := e.c.Heal(bg, "vol1", gd2.HealFull)
		refused(t, e, err, gd2.OpHealTrigger, 400, []error{gd2.ErrSelfHealDisabled}, []error{gd2.ErrVolumeNotStarted})
	})
}

func TestContractStrictPeerAddSpelling(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		status     int
		want       error
	}{
		{"adding a member under its exact address is 409 already exists", "gd2-2:24008", 409, gd2.ErrAlreadyExists},
		{"adding a member without the port is the same address and 409", "gd2-2", 409, gd2.ErrAlreadyExists},
		{"adding a member under another spelling is attempted as a join and is 500 peer is part of another cluster", "gd2-2.gd2.anthill.svc", 500, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				needsSim(t, simPeerSpelling)
			}
			e := newEnv(t)
			_, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{tc.addr}})
			var want []error
			not := []error{gd2.ErrNodeDown}
			if tc.want != nil {
				want = append(want, tc.want)
			} else {
				not = append(not, gd2.ErrAlreadyExists)
			}
			refused(t, e, err, gd2.OpPeersAdd, tc.status, want, not)
			if tc.want == nil && !strings.Contains(err.Error(), "peer is part of another cluster") {
				t.Errorf("error %v, want peer is part of another cluster", err)
			}
			peers, lerr := e.c.ListPeers(bg, gd2.Filter{})
			e.must(lerr, "list peers")
			if len(peers) != 3 {
				t.Errorf("%d peers after a refused add, want 3", len(peers))
			}
		})
	}
}
