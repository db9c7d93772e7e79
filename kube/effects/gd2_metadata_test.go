package effects

import (
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The longest values the API lets a metadata value reach (kubebuilder
// markers in kube/apis/operator/v1alpha1): a namespace is a DNS label, an
// object name a DNS subdomain, a zone a DNS label, gluster.version at most
// 64 characters.
const (
	maxNamespaceLen = 63
	maxNameLen      = 253
	maxZoneLen      = 63
	maxVersionLen   = 64
	// gd2MetadataLimit is GD2's cap on Σ len(key)+len(value) over keys
	// not starting with "_" (fact sheet §4).
	gd2MetadataLimit = transitions.MetadataLimit
)

func longestState(def *fsm.Definition) string {
	longest := ""
	for _, s := range def.States {
		if len(s.Name) > len(longest) {
			longest = string(s.Name)
		}
	}
	return longest
}

// worstPeerMetadata is the largest metadata anthill writes on one peer:
// every key it owns, each at its longest value.
func worstPeerMetadata() map[string]string {
	return map[string]string{
		transitions.MetaNode:    strings.Repeat("n", maxNamespaceLen) + "/" + strings.Repeat("x", maxNameLen),
		transitions.MetaCluster: strings.Repeat("c", maxNameLen),
		transitions.MetaState:   longestState(states.NodeDefinition()),
		PeerMetaZone:            strings.Repeat("z", max(maxZoneLen, len("00000000-0000-0000-0000-000000000000"))),
		transitions.MetaUpgrade: transitions.UpgradeValue(fsm.State(longestState(states.UpgradeDefinition())), strings.Repeat("9", maxVersionLen)),
	}
}

// worstVolumeMetadata is the largest metadata anthill writes on a volume.
func worstVolumeMetadata() map[string]string {
	return transitions.HealMetadata(fsm.State(longestState(states.HealDefinition())), time.Date(2026, 12, 31, 23, 59, 59, 0, time.FixedZone("x", 3600)))
}

// TestAnthillMetadataStaysWellUnderGD2sLimit keeps the budget that
// docs/design/gd2-metadata.md states: anthill's keys never start with "_",
// and at their longest take under a quarter of GD2's 4 KiB, leaving the
// rest to admins and other tools.
func TestAnthillMetadataStaysWellUnderGD2sLimit(t *testing.T) {
	for what, md := range map[string]map[string]string{"peer": worstPeerMetadata(), "volume": worstVolumeMetadata()} {
		for k := range md {
			if strings.HasPrefix(k, "_") || !strings.HasPrefix(k, "anthill-") {
				t.Errorf("%s key %q: anthill's keys start with anthill- (GD2 reserves _)", what, k)
			}
		}
		size := transitions.MetadataSize(md)
		t.Logf("worst-case %s metadata: %d bytes", what, size)
		if size > gd2MetadataLimit/4 {
			t.Errorf("worst-case %s metadata is %d bytes; the documented budget is 1024 of GD2's %d", what, size, gd2MetadataLimit)
		}
	}
	if got := len(worstVolumeMetadata()[transitions.MetaHealSince]); got != len("2026-12-31T22:59:59Z") {
		t.Errorf("heal-since is %d characters; want RFC 3339 in UTC", got)
	}
}

// TestGD2AcceptsTheWorstCaseMetadata writes the worst case through the
// simulator, which enforces GD2's reserved-prefix and size rules.
func TestGD2AcceptsTheWorstCaseMetadata(t *testing.T) {
	f := newFxGD2(t, sim.Config{Peers: 3, Zones: 3, DevicesPerPeer: 1, DeviceSize: 100 * fxGiB})
	peers, err := f.c.ListPeers(fixtures.Ctx, gd2.Filter{})
	fixtures.Must(t, err, "list peers")
	fixtures.Must(t, f.ops.SetPeerMetadata(fixtures.Ctx, peers[0].ID, worstPeerMetadata()), "peer edit")
	for _, p := range peers {
		fixtures.Must(t, f.ops.RegisterDevice(fixtures.Ctx, p.ID, "/dev/sdb", ""), "register device")
	}
	_, err = f.c.CreateVolume(fixtures.Ctx, gd2.VolumeCreateRequest{Name: "v", Size: 1 << 30, Replica: 3})
	fixtures.Must(t, err, "create volume")
	fixtures.Must(t, f.ops.SetVolumeMetadata(fixtures.Ctx, "v", worstVolumeMetadata()), "volume edit")
	v, err := f.c.GetVolume(fixtures.Ctx, "v")
	fixtures.Must(t, err, "get volume")
	if !transitions.HealMetadataCurrent(v.Metadata, worstVolumeMetadata()) {
		t.Errorf("volume metadata %v", v.Metadata)
	}
}
