package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// TestReleaseFixturesAreReadable: every release CHANGELOG.md records has
// its fixtures (what it persisted mid-drain, mid-upgrade and
// mid-recovery, captured from a live run of its binary by the handover
// test), and the current code reads each of them completely: no field it
// does not know (a strict decode), nothing lost when written back (a
// round trip), and every state, ledger action and GD2 metadata value one
// its machines know. The handover tests resume those same workflows with
// the release's binary; this test keeps the releases' persisted shape
// readable even when a release can no longer be built.
func TestReleaseFixturesAreReadable(t *testing.T) {
	root := framework.RepoRoot()
	rels, err := framework.Releases(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) == 0 {
		t.Fatal("CHANGELOG.md records no release")
	}
	for _, rel := range rels {
		t.Run(rel.Version, func(t *testing.T) {
			for _, point := range releaseFixturePoints {
				path := filepath.Join(root, "e2e", "testdata", "releases", rel.Version, point+".json")
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("release %s has no %s fixture (%v); capture the fixtures with "+
						"%s=$PWD/e2e/testdata/releases go test -tags e2e ./e2e -run TestHandover (it runs the previous and the first release)",
						rel.Version, point, err, releaseFixturesEnv)
					continue
				}
				checkReleaseFixture(t, rel.Version, point, raw)
			}
		})
	}
}

func checkReleaseFixture(t *testing.T, version, point string, raw []byte) {
	t.Helper()
	var f releaseFixture
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Errorf("%s %s: the current types cannot read it strictly: %v", version, point, err)
		return
	}
	if f.Release != version || f.Point != point || f.Cluster.Name == "" || len(f.Nodes) == 0 {
		t.Errorf("%s %s: fixture names release %q, point %q, cluster %q, %d nodes", version, point, f.Release, f.Point, f.Cluster.Name, len(f.Nodes))
	}
	back, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var was, is any
	if err := json.Unmarshal(raw, &was); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(back, &is); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(was, is) {
		t.Errorf("%s %s: reading and writing back the fixture changes it (a field the current types drop or reshape)", version, point)
	}

	known := func(what string, d *fsm.Definition, s string) {
		if s != "" && !d.HasState(fsm.State(s)) {
			t.Errorf("%s %s: %s %q is a state the current %s machine does not know", version, point, what, s, d.Machine)
		}
	}
	st := f.Cluster.Status
	known("cluster phase", states.ClusterDefinition(), string(st.Phase))
	if st.Upgrade != nil {
		known("upgrade state", states.UpgradeDefinition(), st.Upgrade.State)
	}
	if st.Disruption != nil {
		known("disruption state", states.DisruptionDefinition(), st.Disruption.State)
	}
	for _, v := range st.Volumes {
		known("heal state of volume "+v.Name, states.HealDefinition(), v.State)
	}
	actions := []string{
		operatorv1alpha1.LedgerActionReplaceBrick, operatorv1alpha1.LedgerActionDeletePeer, operatorv1alpha1.LedgerActionDeleteWorkload,
		operatorv1alpha1.LedgerActionRollWorkload, operatorv1alpha1.LedgerActionDisableDevices, operatorv1alpha1.LedgerActionEnableDevices,
		operatorv1alpha1.LedgerActionEvictLostPod, operatorv1alpha1.LedgerActionCreateNodes, operatorv1alpha1.LedgerActionDecommissionNode,
		operatorv1alpha1.LedgerActionEnsureCSIDrivers, operatorv1alpha1.LedgerActionRollCSIDrivers, operatorv1alpha1.LedgerActionSetClusterOptions,
	}
	for _, e := range st.Ledger {
		if !slices.Contains(actions, e.Action) {
			t.Errorf("%s %s: ledger action %q is not one the current operator knows", version, point, e.Action)
		}
	}
	for _, n := range f.Nodes {
		known("state of node "+n.Name, states.NodeDefinition(), n.Status.State)
	}
	for peer, md := range f.PeerMetadata {
		known("GD2 metadata "+transitions.MetaState+" of peer "+peer, states.NodeDefinition(), md[transitions.MetaState])
		if v, ok := md[transitions.MetaUpgrade]; ok {
			state, _, _ := strings.Cut(v, "/")
			known("GD2 metadata "+transitions.MetaUpgrade+" of peer "+peer, states.UpgradeDefinition(), state)
		}
	}
	for vol, md := range f.VolumeMetadata {
		known("GD2 metadata "+transitions.MetaHealState+" of volume "+vol, states.HealDefinition(), md[transitions.MetaHealState])
	}
}
