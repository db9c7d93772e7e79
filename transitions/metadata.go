package transitions

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// Volume and upgrade metadata keys anthill owns (the node keys are in
// targets.go). The scheme, with every key's writer and its size budget
// against GD2's 4 KiB limit, is docs/design/gd2-metadata.md.
const (
	// MetaHealState mirrors the heal machine's state of a volume into the
	// volume's metadata.
	MetaHealState = "anthill-heal-state"
	// MetaHealSince is when the volume entered MetaHealState (RFC 3339,
	// UTC, seconds); absent until the machine has made a transition.
	MetaHealSince = "anthill-heal-since"
	// MetaUpgrade mirrors the cluster's upgrade machine onto every peer of
	// the cluster: "<state>/<toVersion>" during a run, "Idle" outside one.
	// Peer metadata keys cannot be deleted, so "Idle" is how it says "no
	// upgrade"; a peer without the key has never seen a run.
	MetaUpgrade = "anthill-upgrade"
)

// MetadataLimit is GD2's cap on a peer's or a volume's metadata: the sum
// of len(key)+len(value) over keys not starting with "_".
const MetadataLimit = 4096

// MetadataSize is how GD2 measures metadata against MetadataLimit: the
// sum of len(key)+len(value) over keys not starting with "_".
func MetadataSize(md map[string]string) int {
	n := 0
	for k, v := range md {
		if !strings.HasPrefix(k, "_") {
			n += len(k) + len(v)
		}
	}
	return n
}

// MetadataFits reports whether merging add into current stays within
// MetadataLimit. A write that does not fit is refused by GD2 (400 or 500)
// and would fail the same way on every sync, so mirrors skip it and say
// so instead.
func MetadataFits(current, add map[string]string) bool {
	merged := maps.Clone(current)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, add)
	return MetadataSize(merged) <= MetadataLimit
}

// HealMetadata is the volume metadata mirroring heal state s, entered at
// since (zero: not known, and the key is left out).
func HealMetadata(s fsm.State, since time.Time) map[string]string {
	md := map[string]string{MetaHealState: string(s)}
	if !since.IsZero() {
		md[MetaHealSince] = since.UTC().Format(time.RFC3339)
	}
	return md
}

// HealMetadataCurrent reports whether current (a volume's metadata)
// already carries every key of want, so that the write can be skipped.
func HealMetadataCurrent(current, want map[string]string) bool {
	for k, v := range want {
		if cv, ok := current[k]; !ok || cv != v {
			return false
		}
	}
	return true
}

// UpgradeValue is the MetaUpgrade value for upgrade state s with the
// run's target version: "Idle" carries no version, every other state
// names the run's target ("RollingServers/4.1.1"), or only the state when
// the target is not yet fixed (Validating of a first run).
func UpgradeValue(s fsm.State, target string) string {
	if s == states.UpgradeIdle || target == "" {
		return string(s)
	}
	return string(s) + "/" + target
}

// UpgradeValueCurrent reports whether a peer's MetaUpgrade value (with
// present false when the key is absent) already says want. An absent key
// says Idle: a peer that never saw a run needs no "Idle" written.
func UpgradeValueCurrent(current string, present bool, want string) bool {
	if !present {
		return want == string(states.UpgradeIdle)
	}
	return current == want
}

// MirrorHealState writes the volume's heal metadata md (HealMetadata).
// Like MirrorNodeState it is best effort, after the transition is
// persisted: the caller logs a failure and the next sync, which compares
// the mirrored value, writes it again.
func MirrorHealState(ctx context.Context, g HealGD2, volume string, md map[string]string) error {
	if err := g.SetVolumeMetadata(ctx, volume, md); err != nil {
		return fmt.Errorf("mirror heal state %s to volume %s: %w", md[MetaHealState], volume, err)
	}
	return nil
}

// MirrorUpgradeState writes the upgrade value (UpgradeValue) onto a peer;
// best effort like MirrorNodeState.
func MirrorUpgradeState(ctx context.Context, g NodeGD2, peerID, value string) error {
	if err := g.SetPeerMetadata(ctx, peerID, map[string]string{MetaUpgrade: value}); err != nil {
		return fmt.Errorf("mirror upgrade %s to peer %s: %w", value, peerID, err)
	}
	return nil
}
