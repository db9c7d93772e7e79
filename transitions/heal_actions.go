package transitions

import (
	"context"
	"errors"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// ErrHealNotDelivered marks a heal trigger that GD2 ran but could not
// hand to the self-heal daemon of one or more nodes (GD2's code-2 failure
// at step selfheal.Heal). It is not a failure of the heal: the daemons
// keep crawling on their own. The heal machine therefore fires startHeal
// all the same and watches the crawl, saying why (ReasonHealTriggerFailed).
var ErrHealNotDelivered = errors.New("heal trigger not delivered to the self-heal daemon")

// HealAction runs the side effect of one heal event.
type HealAction func(ctx context.Context, ops Ops, v VolumeTarget) error

// HealActions are the heal machine's actions.
var HealActions = register(Actions[HealAction]{
	Machine: states.HealMachine,
	Events:  map[fsm.Event]HealAction{states.HealStartHeal: startHeal},
	Steps:   map[fsm.Step]HealAction{states.HealForceStartBricks: forceStartBricks},
})

func startHeal(ctx context.Context, ops Ops, v VolumeTarget) error {
	if err := ops.GD2.TriggerHeal(ctx, v.Volume); err != nil {
		return fmt.Errorf("trigger heal of volume %q: %w", v.Volume, err)
	}
	return nil
}

// forceStartBricks starts the bricks GD2 left offline on a live peer of
// the volume. Starting bricks that already run starts nothing new, so a
// repeat (a retry, or a step run again after a crash) changes nothing.
func forceStartBricks(ctx context.Context, ops Ops, v VolumeTarget) error {
	if err := ops.GD2.ForceStartBricks(ctx, v.Volume); err != nil {
		return fmt.Errorf("start the offline bricks of volume %q: %w", v.Volume, err)
	}
	return nil
}
