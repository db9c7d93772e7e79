package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/transitions"
)

// The sandbox's sample volumes, created through GD2 once every node is
// Online, so that a decommission moves bricks and an upgrade waits for
// heals.
const (
	sandboxReplicaVolume = "data-r3"
	sandboxDistRepVolume = "data-2x3"
	// sandboxBrickSize is the size of every brick, unless the devices are
	// too small for it (sandboxVolumeSizes).
	sandboxBrickSize uint64 = 10 << 30
	// sandboxWriteRate and sandboxHealRate: framework.SandboxWriteRate
	// and framework.SandboxHealRate, which the benchmarks share.
	sandboxWriteRate = framework.SandboxWriteRate
	sandboxHealRate  = framework.SandboxHealRate
)

// sandboxVolume is one sample volume and how it is laid out.
type sandboxVolume struct {
	req gd2.VolumeCreateRequest
	// what is the layout in words, for the walkthrough.
	what string
}

// sandboxVolumes are the sample volumes for bricks of brickSize: a replica-3
// volume (one brick per zone) and a 2×3 distributed-replicate one whose two
// replica sets share the zones (subvolume-zones-overlap, as GD2 requires
// for more subvolumes than zones/replica).
func sandboxVolumes(brickSize uint64) []sandboxVolume {
	return []sandboxVolume{
		{req: gd2.VolumeCreateRequest{Name: sandboxReplicaVolume, Size: brickSize, Replica: 3}, what: "replica 3"},
		{req: gd2.VolumeCreateRequest{Name: sandboxDistRepVolume, Size: 2 * brickSize, Distribute: 2, Replica: 3, SubvolZonesOverlap: true}, what: "2 x 3 distributed-replicate"},
	}
}

// sandboxBrickSizeFor fits the bricks to the smallest registered device:
// every device must keep room for a replacement brick, so a brick takes at
// most a quarter of it.
func sandboxBrickSizeFor(devices []gd2.Device) uint64 {
	size := sandboxBrickSize
	for _, d := range devices {
		if d.State == gd2.DeviceEnabled && d.FreeSize/4 < size {
			size = d.FreeSize / 4
		}
	}
	// GD2's smallest volume is 20 MiB.
	return max(size, 20<<20)
}

// createSandboxVolumes creates, starts and turns self-heal on for the
// sample volumes; a volume that already exists is kept as it is.
func createSandboxVolumes(ctx context.Context, g *gd2.Client) error {
	devices, err := g.ListAllDevices(ctx)
	if err != nil {
		return fmt.Errorf("list devices: %w", err)
	}
	for _, v := range sandboxVolumes(sandboxBrickSizeFor(devices)) {
		if err := createSandboxVolume(ctx, g, v.req); err != nil {
			return err
		}
	}
	return nil
}

func createSandboxVolume(ctx context.Context, g *gd2.Client, req gd2.VolumeCreateRequest) error {
	vol, err := g.GetVolume(ctx, req.Name)
	if errors.Is(err, gd2.ErrNotFound) {
		// GD2 rarely answers a smart create with 500 "volume not found"
		// and creates nothing (fact sheet §13); the create is safe to
		// repeat.
		for attempt := 0; ; attempt++ {
			vol, err = g.CreateVolume(ctx, req)
			if err == nil || attempt == 2 || ctx.Err() != nil {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("create volume %s: %w", req.Name, err)
	}
	if vol.State != gd2.VolumeStarted {
		if _, err := g.StartVolume(ctx, req.Name, false); err != nil {
			return fmt.Errorf("start volume %s: %w", req.Name, err)
		}
	}
	// Replicate volumes have the self-heal daemon off by default; without
	// it nothing heals a moved brick.
	if _, err := g.SetVolumeOptions(ctx, req.Name, gd2.VolumeOptionRequest{
		Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true,
	}); err != nil {
		return fmt.Errorf("turn self-heal on for volume %s: %w", req.Name, err)
	}
	return nil
}

// brickPlace is where one brick of a volume lives.
type brickPlace struct {
	volume         string
	subvol, index  int
	node, path, id string
}

// brickLayout reads where every brick of the sample volumes is, naming
// each peer by the GlusterNode anthill tagged it with.
func brickLayout(ctx context.Context, g *gd2.Client) ([]brickPlace, error) {
	peers, err := g.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		return nil, fmt.Errorf("list peers: %w", err)
	}
	names := map[string]string{}
	for _, p := range peers {
		node := p.Metadata[transitions.MetaNode]
		if i := strings.IndexByte(node, '/'); i >= 0 {
			node = node[i+1:]
		}
		names[p.ID] = cmp.Or(node, p.Name, p.ID)
	}
	var out []brickPlace
	for _, name := range []string{sandboxReplicaVolume, sandboxDistRepVolume} {
		v, err := g.GetVolume(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("get volume %s: %w", name, err)
		}
		for si, sv := range v.Subvols {
			for bi, b := range sv.Bricks {
				out = append(out, brickPlace{volume: name, subvol: si, index: bi, node: cmp.Or(names[b.PeerID], b.PeerID), path: b.Path, id: b.PeerID})
			}
		}
	}
	return out, nil
}

// busiestNode is the node holding the most sample bricks (ties: by name),
// the one whose decommission shows the most data moving.
func busiestNode(layout []brickPlace) (string, int) {
	count := map[string]int{}
	for _, b := range layout {
		count[b.node]++
	}
	nodes := make([]string, 0, len(count))
	for n := range count {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		if count[nodes[i]] != count[nodes[j]] {
			return count[nodes[i]] > count[nodes[j]]
		}
		return nodes[i] < nodes[j]
	})
	if len(nodes) == 0 {
		return "", 0
	}
	return nodes[0], count[nodes[0]]
}

// writeLayout prints each sample volume's replica sets and their nodes.
func writeLayout(w io.Writer, layout []brickPlace) {
	what := map[string]string{}
	for _, v := range sandboxVolumes(0) {
		what[v.req.Name] = v.what
	}
	type set struct {
		volume string
		subvol int
	}
	var sets []set
	nodes := map[set][]string{}
	for _, b := range layout {
		s := set{b.volume, b.subvol}
		if _, ok := nodes[s]; !ok {
			sets = append(sets, s)
		}
		nodes[s] = append(nodes[s], b.node)
	}
	for _, s := range sets {
		fmt.Fprintf(w, "  %-9s %-28s replica set %d on %s\n", s.volume, "("+what[s.volume]+")", s.subvol, strings.Join(nodes[s], ", "))
	}
}

// watchBricks reports, until ctx ends, every sample brick that moves to
// another node (a replace-brick by a drain), polling GD2 every interval.
func watchBricks(ctx context.Context, g *gd2.Client, interval time.Duration, say func(format string, a ...any)) {
	var last []brickPlace
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if layout, err := brickLayout(ctx, g); err == nil {
			for _, b := range layout {
				i := slices.IndexFunc(last, func(o brickPlace) bool {
					return o.volume == b.volume && o.subvol == b.subvol && o.index == b.index
				})
				if i >= 0 && last[i].id != b.id {
					say("brick moved: %s replica set %d brick %d (%s): %s -> %s", b.volume, b.subvol, b.index, b.path, last[i].node, b.node)
				}
			}
			last = layout
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
