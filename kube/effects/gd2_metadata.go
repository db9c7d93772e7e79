package effects

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/gd2"
)

// SetVolumeMetadata merges md into the volume's metadata with GD2's
// volume edit. GD2 accepts rewriting the values a volume has, so the call
// is idempotent; callers still skip it when the values are there.
func (g *GD2) SetVolumeMetadata(ctx context.Context, volume string, md map[string]string) error {
	if _, err := g.Client.EditVolume(ctx, volume, gd2.VolumeEditRequest{Metadata: md}); err != nil {
		return fmt.Errorf("set metadata of volume %s: %w", volume, err)
	}
	return nil
}
