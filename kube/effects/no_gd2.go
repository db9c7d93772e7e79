package effects

import (
	"context"
	"errors"

	"github.com/gluster/anthill/transitions"
)

// errNoGD2 means an action needed GD2 before the cluster had a usable GD2
// client (its auth secret does not exist yet). Decisions only choose GD2
// actions when GD2 answered, so this is a transient race, retried.
var errNoGD2 = errors.New("the cluster has no GD2 client yet")

// NoGD2 implements transitions.GD2Ops for a cluster that has no GD2 client
// yet, standing in for GD2: every call fails with errNoGD2 instead of
// dereferencing nil.
type NoGD2 struct{}

var _ transitions.GD2Ops = NoGD2{}

func (NoGD2) AddPeer(context.Context, string, string, map[string]string) (string, error) {
	return "", errNoGD2
}
func (NoGD2) RegisterDevice(context.Context, string, string, string) error { return errNoGD2 }
func (NoGD2) SetDeviceEnabled(context.Context, string, string, bool) error {
	return errNoGD2
}
func (NoGD2) SetPeerMetadata(context.Context, string, map[string]string) error { return errNoGD2 }
func (NoGD2) BrickOnPeer(context.Context, string, string, string) (bool, error) {
	return false, errNoGD2
}
func (NoGD2) ReplaceBrick(context.Context, string, string, string, transitions.MoveTo) error {
	return errNoGD2
}
func (NoGD2) RestorePeerZone(context.Context, string) error  { return errNoGD2 }
func (NoGD2) DeletePeer(context.Context, string) error       { return errNoGD2 }
func (NoGD2) TriggerHeal(context.Context, string) error      { return errNoGD2 }
func (NoGD2) ForceStartBricks(context.Context, string) error { return errNoGD2 }
func (NoGD2) HealReplacement(context.Context, string) error  { return errNoGD2 }
func (NoGD2) SetVolumeMetadata(context.Context, string, map[string]string) error {
	return errNoGD2
}
func (NoGD2) SetClusterOptions(context.Context, map[string]string) error { return errNoGD2 }
