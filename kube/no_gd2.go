package kube

import (
	"context"
	"errors"

	"github.com/gluster/anthill/transitions"
)

// errNoGD2 means an action needed GD2 before the cluster had a usable GD2
// client (its auth secret does not exist yet). Decisions only choose GD2
// actions when GD2 answered, so this is a transient race, retried.
var errNoGD2 = errors.New("the cluster has no GD2 client yet")

// noGD2 stands in for GD2Ops when the cluster has no client: every call
// fails with errNoGD2 instead of dereferencing nil.
type noGD2 struct{}

var _ transitions.GD2Ops = noGD2{}

func (noGD2) AddPeer(context.Context, string, string, map[string]string) (string, error) {
	return "", errNoGD2
}
func (noGD2) RegisterDevice(context.Context, string, string) error { return errNoGD2 }
func (noGD2) SetDeviceEnabled(context.Context, string, string, bool) error {
	return errNoGD2
}
func (noGD2) SetPeerMetadata(context.Context, string, map[string]string) error { return errNoGD2 }
func (noGD2) BrickOnPeer(context.Context, string, string, string) (bool, error) {
	return false, errNoGD2
}
func (noGD2) ReplaceBrick(context.Context, string, string, string, transitions.MoveTo) error {
	return errNoGD2
}
func (noGD2) RestorePeerZone(context.Context, string) error { return errNoGD2 }
func (noGD2) DeletePeer(context.Context, string) error      { return errNoGD2 }
func (noGD2) TriggerHeal(context.Context, string) error     { return errNoGD2 }
func (noGD2) SetVolumeMetadata(context.Context, string, map[string]string) error {
	return errNoGD2
}
