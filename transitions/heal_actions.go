package transitions

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// HealAction runs the side effect of one heal event.
type HealAction func(ctx context.Context, ops Ops, v VolumeTarget) error

// HealActions are the heal machine's actions.
var HealActions = register(Actions[HealAction]{
	Machine: states.HealMachine,
	Events:  map[fsm.Event]HealAction{states.HealStartHeal: startHeal},
})

func startHeal(ctx context.Context, ops Ops, v VolumeTarget) error {
	if err := ops.GD2.TriggerHeal(ctx, v.Volume); err != nil {
		return fmt.Errorf("trigger heal of volume %q: %w", v.Volume, err)
	}
	return nil
}
