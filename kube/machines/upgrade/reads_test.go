package upgrade

import (
	"testing"

	"github.com/gluster/anthill/kube/machines/wake"
)

func TestWakeReadsCoverOwnedStatus(t *testing.T) {
	if unread := wake.Unread(wake.UpgradeReads, upgradeFields); len(unread) > 0 {
		t.Errorf("owned but not read by the wake-up predicate: %T", unread)
	}
}
