package effects

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/transitions"
)

// PeerMetaZone records, on a peer anthill moved out of its zone to drain it
// (see GD2.ReplaceBrick), the zone it had before. Like the keys in
// transitions it has no leading "_" (GD2 reserves those).
const PeerMetaZone = "anthill-zone"

// ErrNoPlacement means GD2 found nowhere to put a replacement brick: no
// registered, enabled device with room in a zone the brick's replica set
// does not already use. Adding a node (or a device) to a suitable zone
// unblocks it; repeating the call as it is will not.
var ErrNoPlacement = errors.New("no device can take the replacement brick")

// GD2 implements transitions.GD2Ops with a GD2 client bound to one
// cluster's management endpoint.
type GD2 struct {
	Client *gd2.Client
	// Local is the client of the node's own GD2 (GD2Clients.ForNode), for
	// the requests GD2 must serve on that node (replace-brick). Nil when
	// the node's address is not known yet.
	Local *gd2.Client
}

var _ transitions.GD2Ops = (*GD2)(nil)

// AddPeer returns the peer already tagged with metadata[MetaNode] if there
// is one, so that a join repeated after a crash adds nothing. Otherwise it
// adds the peer. If GD2 answers that a peer with that address exists (the
// node's GD2 is already a member: the first pod bootstraps the pool with
// itself, without anthill's metadata), it adopts that peer by writing the
// zone and metadata onto it, unless it is tagged for another node.
func (g *GD2) AddPeer(ctx context.Context, address, zone string, metadata map[string]string) (string, error) {
	key := metadata[transitions.MetaNode]
	if key != "" {
		id, err := g.peerTaggedFor(ctx, key)
		if err != nil {
			return "", fmt.Errorf("find peer of node %s: %w", key, err)
		}
		if id != "" {
			return id, nil
		}
	}
	p, err := g.Client.AddPeer(ctx, gd2.PeerAddRequest{Addresses: []string{address}, Zone: zone, Metadata: metadata})
	if err == nil {
		return p.ID, nil
	}
	if !errors.Is(err, gd2.ErrAlreadyExists) {
		return "", fmt.Errorf("add peer %q for node %s: %w", address, key, err)
	}
	id, err := g.adoptPeer(ctx, address, zone, metadata)
	if err != nil {
		return "", fmt.Errorf("adopt existing peer %q for node %s: %w", address, key, err)
	}
	return id, nil
}

// peerTaggedFor returns the id of the peer whose MetaNode is key, "" if
// none.
func (g *GD2) peerTaggedFor(ctx context.Context, key string) (string, error) {
	peers, err := g.Client.ListPeers(ctx, gd2.Filter{Key: transitions.MetaNode, Value: key})
	if err != nil {
		return "", err
	}
	for _, p := range peers {
		// The filter already matched; checking again guards against a
		// server that ignores the query.
		if p.Metadata[transitions.MetaNode] == key {
			return p.ID, nil
		}
	}
	return "", nil
}

func (g *GD2) adoptPeer(ctx context.Context, address, zone string, metadata map[string]string) (string, error) {
	peers, err := g.Client.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		return "", err
	}
	want := peerHost(address)
	for _, p := range peers {
		if !peerHasHost(p, want) {
			continue
		}
		if owner := p.Metadata[transitions.MetaNode]; owner != "" && owner != metadata[transitions.MetaNode] {
			return "", fmt.Errorf("peer %s at that address belongs to node %s", p.ID, owner)
		}
		if _, err := g.Client.EditPeer(ctx, p.ID, gd2.PeerEditRequest{Zone: zone, Metadata: metadata}); err != nil {
			return "", fmt.Errorf("tag peer %s: %w", p.ID, err)
		}
		return p.ID, nil
	}
	return "", errors.New("GD2 reports the address in use but lists no peer with it")
}

// peerHost is the host part of a peer address, lowercased: GD2 adds the
// peer port itself when it is missing.
func peerHost(address string) string {
	h := address
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i+1:], "]") {
		h = h[:i]
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

func peerHasHost(p gd2.Peer, host string) bool {
	for _, a := range p.PeerAddresses {
		if peerHost(a) == host {
			return true
		}
	}
	return strings.EqualFold(p.Name, host) || strings.EqualFold(p.Name, strings.SplitN(host, ".", 2)[0])
}

// RegisterDevice registers device on the peer for provisioner (GD2's
// default, lvm, when ""); a device GD2 already has is success.
func (g *GD2) RegisterDevice(ctx context.Context, peerID, device, provisioner string) error {
	_, err := g.Client.AddDevice(ctx, peerID, gd2.DeviceAddRequest{Device: device, Provisioner: provisioner})
	if err != nil && !errors.Is(err, gd2.ErrAlreadyExists) {
		return fmt.Errorf("register device %q on peer %s: %w", device, peerID, err)
	}
	return nil
}

// SetDeviceEnabled sets the device's state. GD2 accepts setting the state a
// device already has, so the call is idempotent as it stands.
func (g *GD2) SetDeviceEnabled(ctx context.Context, peerID, device string, enabled bool) error {
	state := gd2.DeviceDisabled
	if enabled {
		state = gd2.DeviceEnabled
	}
	if err := g.Client.EditDevice(ctx, peerID, device, state); err != nil {
		return fmt.Errorf("set device %q on peer %s %s: %w", device, peerID, state, err)
	}
	return nil
}

// SetPeerMetadata merges md into the peer's metadata.
func (g *GD2) SetPeerMetadata(ctx context.Context, peerID string, md map[string]string) error {
	if _, err := g.Client.EditPeer(ctx, peerID, gd2.PeerEditRequest{Metadata: md}); err != nil {
		return fmt.Errorf("set metadata of peer %s: %w", peerID, err)
	}
	return nil
}

// BrickOnPeer reports whether volume has a brick at path on the peer. A
// volume that no longer exists has no brick anywhere.
func (g *GD2) BrickOnPeer(ctx context.Context, volume, peerID, brickPath string) (bool, error) {
	v, err := g.Client.GetVolume(ctx, volume)
	if errors.Is(err, gd2.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get volume %s: %w", volume, err)
	}
	_, found := findBrick(v, peerID, brickPath)
	return found, nil
}

func findBrick(v *gd2.Volume, peerID, brickPath string) (gd2.BrickInfo, bool) {
	want := path.Clean(brickPath)
	for _, b := range v.Bricks() {
		if b.PeerID == peerID && path.Clean(b.Path) == want {
			return b, true
		}
	}
	return gd2.BrickInfo{}, false
}

// ReplaceBrick moves the brick at brickPath on srcPeerID to a device on one
// of to.Peers, which the dispatcher planned (states.PlanMove): each keeps the
// brick's replica set in distinct zones and cannot hold a logical volume
// named like the replacement.
//
// The request goes to Local, the source node's own GD2: GD2 sizes the new
// brick from the source brick's path on the node serving the request, and
// any other node would prepare a brick of size 0 (fact sheet §7).
//
// It is not idempotent and never retried here: GD2 does not check the
// source brick and would replace another brick of the volume. The caller
// checks BrickOnPeer immediately before.
//
// GD2 counts the source brick's own zone as used. A move into the
// source's zone (to.SameZone) therefore first moves the source peer to
// transitions.DrainingZone(zone), keeping the old zone under PeerMetaZone;
// RestorePeerZone undoes that if the drain is cancelled. The request sets
// subvolume-zones-overlap, so GD2 compares zones within the brick's replica
// set only, as the planner did.
//
// A replacement whose follow-up read failed did happen; that is success,
// and the next sync re-reads the placement.
func (g *GD2) ReplaceBrick(ctx context.Context, volume, srcPeerID, brickPath string, to transitions.MoveTo) error {
	if g.Local == nil {
		return fmt.Errorf("replace brick %s:%s on peer %s: no client for the source node's own GD2", volume, brickPath, srcPeerID)
	}
	if to.SameZone {
		if err := g.moveOutOfZone(ctx, srcPeerID); err != nil {
			return fmt.Errorf("replace brick %s:%s on peer %s: move the peer out of its zone: %w", volume, brickPath, srcPeerID, err)
		}
	}
	req := gd2.ReplaceBrickRequest{
		SrcPeerID:          srcPeerID,
		SrcBrickPath:       brickPath,
		LimitPeers:         to.Peers,
		SubvolZonesOverlap: true,
	}
	_, err := g.Local.ReplaceBrick(ctx, volume, req)
	switch {
	case err == nil, errors.Is(err, gd2.ErrRefreshFailed):
		return nil
	case errors.Is(err, gd2.ErrNoCapacity):
		return fmt.Errorf("replace brick %s:%s on peer %s: %w: %w", volume, brickPath, srcPeerID, ErrNoPlacement, err)
	default:
		return fmt.Errorf("replace brick %s:%s on peer %s: %w", volume, brickPath, srcPeerID, err)
	}
}

// moveOutOfZone moves the peer to transitions.DrainingZone of its zone,
// recording the old zone. A peer already in a draining zone is left as it
// is, so a repeat never stacks suffixes.
func (g *GD2) moveOutOfZone(ctx context.Context, peerID string) error {
	p, err := g.Client.GetPeer(ctx, peerID)
	if err != nil {
		return err
	}
	zone := p.Zone()
	if strings.HasSuffix(zone, transitions.DrainingZone("")) {
		return nil
	}
	md := map[string]string{PeerMetaZone: zone}
	_, err = g.Client.EditPeer(ctx, peerID, gd2.PeerEditRequest{Zone: transitions.DrainingZone(zone), Metadata: md})
	return err
}

// RestorePeerZone puts a peer that ReplaceBrick moved out of its zone back
// into it (for a drain that is cancelled by a resume request). A peer that
// was never moved is left alone.
func (g *GD2) RestorePeerZone(ctx context.Context, peerID string) error {
	p, err := g.Client.GetPeer(ctx, peerID)
	if err != nil {
		return fmt.Errorf("restore zone of peer %s: %w", peerID, err)
	}
	orig := p.Metadata[PeerMetaZone]
	if orig == "" || p.Zone() != transitions.DrainingZone(orig) {
		return nil
	}
	if _, err := g.Client.EditPeer(ctx, peerID, gd2.PeerEditRequest{Zone: orig}); err != nil {
		return fmt.Errorf("restore zone %q of peer %s: %w", orig, peerID, err)
	}
	return nil
}

// DeletePeer removes the peer from the pool; a peer already gone is
// success. GD2's refusals (bricks left, peer dead, serving peer) are
// returned for the caller to classify with errors.Is.
func (g *GD2) DeletePeer(ctx context.Context, peerID string) error {
	err := g.Client.DeletePeer(ctx, peerID)
	if err != nil && !errors.Is(err, gd2.ErrNotFound) {
		return fmt.Errorf("delete peer %s: %w", peerID, err)
	}
	return nil
}

// TriggerHeal starts an index heal of volume. GD2 confirms a trigger while
// the self-heal daemon is already draining; an answer saying a heal is
// already in progress is treated the same way. A trigger that failed only
// at the self-heal daemon RPC (gd2.ErrHealNotDelivered) is marked
// transitions.ErrHealNotDelivered: the daemons crawl without it.
func (g *GD2) TriggerHeal(ctx context.Context, volume string) error {
	err := g.Client.Heal(ctx, volume, gd2.HealIndex)
	if err == nil {
		return nil
	}
	if errors.Is(err, gd2.ErrHealNotDelivered) {
		return fmt.Errorf("trigger heal of volume %s: %w: %w", volume, transitions.ErrHealNotDelivered, err)
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "already in progress") || strings.Contains(msg, "already running") {
		return nil
	}
	return fmt.Errorf("trigger heal of volume %s: %w", volume, err)
}

// replacementHealOptions are the volume options HealReplacement sets: the
// self-heal daemon's switch, set on again so that GD2 regenerates the
// daemons' volfile with the new brick (GD2 does not on replace-brick, and
// does only when this key is set on), and the three self-heal switches
// GD2's daemon volfile leaves off.
var replacementHealOptions = map[string]string{
	gd2.OptionSelfHealDaemon:   "on",
	gd2.OptionDataSelfHeal:     "on",
	gd2.OptionMetadataSelfHeal: "on",
	gd2.OptionEntrySelfHeal:    "on",
}

// ReplacementHealOptions are the volume options HealReplacement sets, as
// "key=value", sorted: what its ledger entry records.
func ReplacementHealOptions() []string {
	out := make([]string, 0, len(replacementHealOptions))
	for k, v := range replacementHealOptions {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// HealReplacement makes GD2 heal the replacement bricks of volume: it sets
// replacementHealOptions (the self-heal daemon's is an advanced option)
// and triggers a full heal, which queues every entry of the volume for
// the daemons to compare and copy; an index heal would find nothing, as
// GD2 marked nothing for the new brick. A full heal GD2 could not hand to
// a daemon (gd2.ErrHealNotDelivered) is marked
// transitions.ErrHealNotDelivered and fails: nothing else heals a
// replacement. One already running counts as sent.
func (g *GD2) HealReplacement(ctx context.Context, volume string) error {
	req := gd2.VolumeOptionRequest{Options: replacementHealOptions, AllowAdvanced: true}
	if _, err := g.Client.SetVolumeOptions(ctx, volume, req); err != nil {
		return fmt.Errorf("heal replacements of volume %s: set the self-heal options: %w", volume, err)
	}
	err := g.Client.Heal(ctx, volume, gd2.HealFull)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gd2.ErrHealNotDelivered):
		return fmt.Errorf("heal replacements of volume %s: full heal: %w: %w", volume, transitions.ErrHealNotDelivered, err)
	}
	if msg := strings.ToLower(err.Error()); strings.Contains(msg, "already in progress") || strings.Contains(msg, "already running") {
		return nil
	}
	return fmt.Errorf("heal replacements of volume %s: full heal: %w", volume, err)
}

// ForceStartBricks starts the bricks of a started volume that are not
// running: GD2's volume start with force-start-bricks, which mounts a
// brick a restarted GD2 started before mounting it and starts it. Bricks
// that run are left running. The volume is read first and must be
// started: a force start of a stopped volume would start the volume
// itself, which is an admin's decision, not a repair.
func (g *GD2) ForceStartBricks(ctx context.Context, volume string) error {
	v, err := g.Client.GetVolume(ctx, volume)
	if err != nil {
		return fmt.Errorf("read volume %s before starting its bricks: %w", volume, err)
	}
	if v.State != gd2.VolumeStarted {
		return fmt.Errorf("start the bricks of volume %s: the volume is %s, not started: %w", volume, v.State, gd2.ErrVolumeNotStarted)
	}
	if _, err := g.Client.StartVolume(ctx, volume, true); err != nil {
		return fmt.Errorf("start the bricks of volume %s (force-start-bricks): %w", volume, err)
	}
	return nil
}

// SetClusterOptions sets cluster-wide options (GD2 answers with every
// option explicitly set, which nothing here needs).
func (g *GD2) SetClusterOptions(ctx context.Context, options map[string]string) error {
	if _, err := g.Client.SetClusterOptions(ctx, options); err != nil {
		return fmt.Errorf("set cluster options %v: %w", options, err)
	}
	return nil
}
