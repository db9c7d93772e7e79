package sim

import "testing"

func TestInPlaceExpandResizesByThePlannersOneBasedNames(t *testing.T) {
	const grow = 1 << 30
	t.Run("a volume never touched by replace-brick grows every brick", func(t *testing.T) {
		h := replSetup(t, Config{})
		h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2})
		before := h.brickSize("v", 0, 0)
		h.must(200, "POST", "/v1/volumes/v/expand", wireVolExpandReq{Size: grow, Distribute: 1})
		if got := h.brickSize("v", 0, 0); got <= before+grow-grow/100 {
			t.Fatalf("brick grew from %d to %d, want about %d more", before, got, grow)
		}
		if v := h.volume("v"); v.Capacity != 2<<30 {
			t.Fatalf("capacity %d after the grow", v.Capacity)
		}
	})
	t.Run("after a replace-brick the moved brick's 1-based name is not in its group", func(t *testing.T) {
		h := replSetup(t, Config{})
		h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2})
		src := h.volume("v").Subvols[0].Bricks[0]
		h.mustAt(src.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
		moved := h.volume("v").Subvols[0].Bricks[0]
		kept := h.brickSize("v", 0, 1)
		r := h.do("POST", "/v1/volumes/v/expand", wireVolExpandReq{Size: grow, Distribute: 1})
		it := wantCode2(t, r, stepLvmResize, `Failed to find logical volume "gluster-dev-sdb/tp_v_s1_b1"`)
		if it.Fields["peer-id"] != moved.PeerID {
			t.Fatalf("failing node %s, want the moved brick's %s", it.Fields["peer-id"], moved.PeerID)
		}
		// The untouched brick's node resized its own: that stays.
		if got := h.brickSize("v", 0, 1); got <= kept {
			t.Fatalf("the untouched brick did not grow: %d", got)
		}
		if v := h.volume("v"); v.Capacity != 1<<30 {
			t.Fatalf("capacity %d recorded after a failed grow", v.Capacity)
		}
	})
	t.Run("after a brick moved away and back, the old LV of its position grows instead of it", func(t *testing.T) {
		h := replSetup(t, Config{})
		h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2})
		a := h.volume("v").Subvols[0].Bricks[0]
		h.mustAt(a.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: a.PeerID, SrcBrickPath: a.Path})
		x := h.volume("v").Subvols[0].Bricks[0]
		h.mustAt(x.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: x.PeerID, SrcBrickPath: x.Path, LimitPeers: []string{a.PeerID}})
		back := h.brickSize("v", 0, 0)
		// a's group still holds the first brick's tp_v_s1_b1 (a replaced
		// brick keeps its LV): GD2 grows that one, and answers 200.
		h.must(200, "POST", "/v1/volumes/v/expand", wireVolExpandReq{Size: grow, Distribute: 1})
		if got := h.brickSize("v", 0, 0); got != back {
			t.Fatalf("the live brick grew from %d to %d; GD2 grows the old LV of its position", back, got)
		}
		if d := h.device(a.PeerID); d.LVs["tp_v_s1_b1"] <= d.LVs["tp_v_s0_b0"] {
			t.Fatalf("LVs on the brick's device %v: want the old pool grown", d.LVs)
		}
		if v := h.volume("v"); v.Capacity != 2<<30 {
			t.Fatalf("capacity %d: GD2 records the grow", v.Capacity)
		}
	})
	t.Run("loop bricks have no volume group", func(t *testing.T) {
		h := loopSetup(t, 3, 0)
		h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3, Provisioner: provLoop})
		r := h.do("POST", "/v1/volumes/v/expand", wireVolExpandReq{Size: grow, Distribute: 1})
		var e wireErrorResp
		r.decode(t, &e)
		if r.status != 500 || len(e.Errors) != 3 {
			t.Fatalf("loop grow: %d %s, want one error per brick node", r.status, r.body)
		}
		for _, it := range e.Errors {
			if it.Fields["step"] != stepLvmResize || it.Fields["error"] != `Volume group "gluster-srv-gluster-loop" not found` {
				t.Errorf("error item %+v", it)
			}
		}
	})
}
