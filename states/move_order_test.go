package states

import (
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/fsm"
)

func TestNextMove(t *testing.T) {
	// Peer a drains; a2 shares its zone, e is a zone of its own.
	zones := map[string]string{"a": "z1", "a2": "z1", "b": "z2", "c": "z3", "d": "z4", "e": "z5"}
	v1 := layout("v1", []string{"a", "b", "c"})
	v2 := layout("v2", []string{"a", "b", "c"})
	// v3 has a brick on d, which the cases take down.
	v3 := layout("v3", []string{"a", "b", "d"})
	formerOf := func(v VolumeFacts, peer string) map[BrickRef][]string {
		return map[BrickRef][]string{{Volume: v.Name, Path: v.Subvols[0].Bricks[0].Path}: {peer}}
	}
	cases := []struct {
		name    string
		vols    []VolumeFacts
		down    []string
		devices []DeviceFacts
		former  map[BrickRef][]string
		refused []string
		// wantPath is the brick moved now, "" for none; wantTargets where.
		wantPath    string
		wantTargets []string
		// wantBlocked and wantNodeDown are phrases the two messages hold
		// ("" for an empty message).
		wantBlocked, wantNodeDown string
	}{
		{name: "the first movable brick by volume and path goes first",
			vols: []VolumeFacts{v2, v1}, devices: roomOn(1000, "a2"),
			wantPath: v1.Subvols[0].Bricks[0].Path, wantTargets: []string{"a2"}},
		{name: "a brick with no place to go does not hold up the bricks after it",
			vols: []VolumeFacts{v1, v2}, devices: roomOn(1000, "a2"), former: formerOf(v1, "a2"),
			wantPath: v2.Subvols[0].Bricks[0].Path, wantTargets: []string{"a2"}},
		{name: "a down node of another volume is named while a brick of the first volume moves",
			vols: []VolumeFacts{v1, v3}, down: []string{"d"}, devices: roomOn(1000, "a2"),
			wantPath: v1.Subvols[0].Bricks[0].Path, wantTargets: []string{"a2"}, wantNodeDown: "d (peer d)"},
		{name: "with no brick able to move, a block that waits for a down node is named before a placement block",
			vols: []VolumeFacts{v1, v3}, down: []string{"d"}, devices: roomOn(1000, "a2"), former: formerOf(v1, "a2"),
			wantBlocked: "while a node holding one of its bricks is down: d (peer d)", wantNodeDown: "volume v3"},
		{name: "with no brick able to move and no node down, the first brick's block is named",
			vols: []VolumeFacts{v1, v2}, devices: roomOn(10, "a2", "e"),
			wantBlocked: "of volume v1"},
		{name: "a peer a brick move already failed on is not offered again",
			vols: []VolumeFacts{v1}, devices: roomOn(1000, "a2", "e"), refused: []string{"a2"},
			wantPath: v1.Subvols[0].Bricks[0].Path, wantTargets: []string{"e"}},
		{name: "when only refused peers have room, the block says they are not offered again",
			vols: []VolumeFacts{v1}, devices: roomOn(1000, "a2"), refused: []string{"a2"},
			wantBlocked: "1 peer(s) are not offered again"},
		{name: "a node without movable bricks has nothing to move and nothing blocked"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := DrainFacts{
				Source: "a", Movable: AnalyzePeer("a", tc.vols, nil).Movable, Volumes: tc.vols,
				Peers: zonePeers(zones, tc.down...), Devices: tc.devices, FormerHolders: tc.former, Refused: tc.refused,
			}
			refused := slices.Clone(tc.refused)
			got := NextMove(f)
			if got.Found != (tc.wantPath != "") || got.Move.Brick.Path != tc.wantPath || !slices.Equal(got.Move.Plan.Targets, tc.wantTargets) {
				t.Fatalf("next move %+v (found %t), want brick %q to %v", got.Move, got.Found, tc.wantPath, tc.wantTargets)
			}
			for what, pair := range map[string][2]string{"blocked": {got.Blocked, tc.wantBlocked}, "node down": {got.NodeDown, tc.wantNodeDown}} {
				if (pair[0] == "") != (pair[1] == "") || !strings.Contains(pair[0], pair[1]) {
					t.Errorf("%s = %q, want it to say %q", what, pair[0], pair[1])
				}
			}
			// The preview plans the same bricks the same way: the move
			// chosen is the first of its bricks that can go somewhere.
			var first BrickMove
			for _, m := range PlanMoves(f) {
				if m.Block == nil {
					first = m
					break
				}
			}
			if first.Brick.Path != got.Move.Brick.Path || !slices.Equal(first.Plan.Targets, got.Move.Plan.Targets) {
				t.Errorf("the preview's first movable brick is %+v, the drain's %+v", first, got.Move)
			}
			if !slices.Equal(f.Refused, refused) {
				t.Error("NextMove modified the refused peers")
			}
		})
	}
}

func TestPlanMovesPlansEveryMovableBrickInTheDrainsOrder(t *testing.T) {
	zones := map[string]string{"a": "z1", "a2": "z1", "b": "z2", "c": "z3"}
	v1 := layout("v1", []string{"a", "b", "c"}, []string{"c", "b", "a"})
	v2 := layout("v2", []string{"a", "b", "c"})
	f := DrainFacts{
		Source: "a", Movable: AnalyzePeer("a", []VolumeFacts{v2, v1}, nil).Movable, Volumes: []VolumeFacts{v2, v1},
		Peers: zonePeers(zones), Devices: roomOn(1000, "a2"),
		FormerHolders: map[BrickRef][]string{{Volume: "v1", Path: v1.Subvols[1].Bricks[2].Path}: {"a2"}},
	}
	var got []string
	for _, m := range PlanMoves(f) {
		blocked := m.Block != nil
		got = append(got, m.Brick.Path+map[bool]string{true: " blocked", false: " to " + strings.Join(m.Plan.Targets, ",")}[blocked])
	}
	want := []string{"/b/v1/s0/b0 to a2", "/b/v1/s1/b2 blocked", "/b/v2/s0/b0 to a2"}
	if !slices.Equal(got, want) {
		t.Fatalf("plans %q, want %q", got, want)
	}
}

func TestRefuseAfterFailure(t *testing.T) {
	cases := []struct {
		name       string
		refused    []string
		step       fsm.Step
		preparedOn []string
		want       []string
	}{
		{name: "a failed brick move refuses the peers GD2 began preparing the new brick on",
			step: NodeMoveBrick, preparedOn: []string{"p1", "p2"}, want: []string{"p1", "p2"}},
		{name: "a peer refused before is listed once, after the ones already refused",
			refused: []string{"p0", "p1"}, step: NodeMoveBrick, preparedOn: []string{"p1", "p2"}, want: []string{"p0", "p1", "p2"}},
		{name: "a brick move that failed before GD2 prepared anything refuses no peer",
			refused: []string{"p0"}, step: NodeMoveBrick, want: []string{"p0"}},
		{name: "a failed step other than a brick move refuses no peer",
			refused: []string{"p0"}, step: NodeRollWorkload, preparedOn: []string{"p1"}, want: []string{"p0"}},
		{name: "a node that never had a refused peer keeps none after an unrelated failure",
			step: NodeRollWorkload, preparedOn: []string{"p1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Spare room behind the input shows whether it is written to.
			in := append(make([]string, 0, len(tc.refused)+4), tc.refused...)
			got := RefuseAfterFailure(in, tc.step, tc.preparedOn)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("refused %v, want %v", got, tc.want)
			}
			if tail := in[len(in):cap(in)]; slices.ContainsFunc(tail, func(s string) bool { return s != "" }) || !slices.Equal(in, tc.refused) {
				t.Error("RefuseAfterFailure modified its input")
			}
		})
	}
}
