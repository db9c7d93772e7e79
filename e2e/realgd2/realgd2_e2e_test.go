//go:build e2e

package realgd2

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
)

const (
	volume    = "rg"
	brickSize = 512 << 20 // xfsprogs refuses file systems under 300 MB
)

// The volume options that make GD2 heal a replacement brick
// (../shared/third_party/glusterd2/NOTES.md): the self-heal daemon's
// switch, set again so that GD2 writes the daemons a volfile naming the
// new brick; and data, metadata and entry self-heal, which GD2's daemon
// volfile leaves off.
const (
	optSelfHealDaemon = gd2.OptionSelfHealDaemon
	optDataHeal       = "cluster/replicate.data-self-heal"
	optMetadataHeal   = "cluster/replicate.metadata-self-heal"
	optEntryHeal      = "cluster/replicate.entry-self-heal"
	optHealTimeout    = "cluster/replicate.heal-timeout"
)

type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestReplaceBrickHealsOnlyAfterARealHeal: on a 4-node real GD2 pool, a
// replica-3 smart volume written through a FUSE mount has a brick
// replaced onto the fourth node. Right after, heal-info is read as it is
// (GD2 reports nothing to heal while the new brick is empty); the new
// brick holds every file, byte for byte, only after the steps that make
// GD2 heal it. Then every file reads back through a fresh mount. Then a
// node holding a brick is SIGKILLed with its bricks and daemons, files are
// written while it is down, and once it is started again its brick comes
// back online and heals, and everything reads back again.
func TestReplaceBrickHealsOnlyAfterARealHeal(t *testing.T) {
	framework.RequireRealGD2(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	step := func(format string, args ...any) {
		t.Logf("%6.1fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
	}

	pool, ids, vol := replica3Pool(ctx, t, map[string]string{optSelfHealDaemon: "on", optHealTimeout: "5"}, step)
	n1 := pool.Nodes[0]
	c1 := client(t, n1)
	byPeer := map[string]*framework.GD2Node{}
	for _, n := range pool.Nodes {
		byPeer[ids[n]] = n
	}
	step("replica-3 smart volume %s created and started on %s, its bricks online, self-heal daemon on", volume, nodeNames(byPeer, vol.Bricks()))

	m, err := pool.Mount(ctx, n1, volume)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	written := writeFiles(t, m, "a", 48, 1, want)
	step("wrote %d files, %d bytes, through a FUSE mount", len(want), written)
	for _, b := range vol.Bricks() {
		waitBrickHolds(ctx, t, byPeer[b.PeerID], b.Path, want, 30*time.Second, nil)
	}
	step("every file on all 3 bricks, checksums equal")

	// Replace node 2's brick: the request goes to the node that holds it
	// (GD2 sizes the new brick from the source path there); the only zone
	// left is node 4's.
	src := brickOn(t, vol, ids[pool.Nodes[1]])
	c2 := client(t, pool.Nodes[1])
	if _, err := c2.ReplaceBrick(ctx, volume, gd2.ReplaceBrickRequest{SrcPeerID: src.PeerID, SrcBrickPath: src.Path}); err != nil {
		t.Fatalf("replace-brick: %v", err)
	}
	vol, err = c1.GetVolume(ctx, volume)
	if err != nil {
		t.Fatal(err)
	}
	n4 := pool.Nodes[3]
	dst := brickOn(t, vol, ids[n4])
	if dst.Path != src.Path {
		t.Errorf("the new brick's path is %s, not the source's %s", dst.Path, src.Path)
	}
	step("replace-brick: %s's brick now on %s", pool.Nodes[1].Name, n4.Name)
	waitBricksOnline(ctx, t, c1, 3)

	// Right after the replace: what heal-info says, and what the new
	// brick holds.
	hi, err := c1.HealInfo(ctx, volume, gd2.HealInfoEntries)
	if err != nil {
		t.Fatalf("heal-info: %v", err)
	}
	pending := int64(0)
	for _, b := range hi {
		if b.Entries != nil && *b.Entries > 0 {
			pending += *b.Entries
		}
	}
	onNew := len(brickSums(t, n4.Path(dst.Path)))
	step("right after the replace: heal-info %s; the new brick holds %d of %d files", healSummary(hi), onNew, len(want))
	if onNew == len(want) {
		t.Errorf("the new brick held every file before any heal: nothing left to prove")
	}
	// NOTES.md: GD2 never marks the new brick as a heal sink, so heal-info
	// counts nothing while the new brick is empty. An operator that gates
	// on heal-info alone would take the empty brick for a healed copy.
	if pending != 0 {
		t.Errorf("heal-info counts %d entries right after the replace-brick; NOTES.md and docs/gd2sim.md say 0: update both", pending)
	}
	// The replaced brick stays mounted (and served) on its old node.
	if left, err := pool.Nodes[1].Mounted(src.Path); err != nil {
		t.Fatal(err)
	} else if !left {
		t.Errorf("the replaced brick is no longer mounted on %s; NOTES.md and docs/gd2sim.md say GD2 leaves it", pool.Nodes[1].Name)
	} else {
		step("the replaced brick is still mounted on %s", pool.Nodes[1].Name)
	}

	// A write after the replace, through the mount made before it: GD2
	// tells its clients of the new volfile, so new files reach the new
	// brick without any heal.
	after := map[string]string{}
	written += writeFiles(t, m, "b", 8, 2, after)
	for k, v := range after {
		want[k] = v
	}
	waitBrickHolds(ctx, t, n4, dst.Path, after, 15*time.Second, nil)
	step("wrote 8 more files through the old mount: on the new brick at once (%d of %d files there)", len(brickSums(t, n4.Path(dst.Path))), len(want))

	// What it takes for GD2 to heal the new brick.
	if _, err := c1.SetVolumeOptions(ctx, volume, gd2.VolumeOptionRequest{
		Options: map[string]string{optSelfHealDaemon: "on", optDataHeal: "on", optMetadataHeal: "on", optEntryHeal: "on"}, AllowAdvanced: true,
	}); err != nil {
		t.Fatalf("heal options: %v", err)
	}
	if err := c1.Heal(ctx, volume, gd2.HealFull); err != nil {
		t.Fatalf("full heal: %v", err)
	}
	healStart := time.Now()
	step("self-heal daemon set on again, data/metadata/entry self-heal on, full heal triggered")
	fullHeal := func() {
		if err := c1.Heal(ctx, volume, gd2.HealFull); err != nil {
			t.Fatalf("full heal: %v", err)
		}
	}
	again := waitBrickHolds(ctx, t, n4, dst.Path, want, 90*time.Second, fullHeal)
	step("the new brick holds all %d files, checksums equal, %.1fs after the heal began (full heal triggered %d times more)", len(want), time.Since(healStart).Seconds(), again)

	m.Unmount()
	m2, err := pool.Mount(ctx, n1, volume)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, m2, want)
	step("all %d files (%d bytes) read back identical through a fresh mount", len(want), written)
	m2.Unmount()

	// SIGKILL a node holding a brick, write while it is down, start it.
	n3 := pool.Nodes[2]
	victim := brickOn(t, vol, ids[n3])
	n3.Kill()
	step("%s killed (glusterd2, its brick, its self-heal daemon)", n3.Name)
	m3, err := pool.Mount(ctx, n1, volume)
	if err != nil {
		t.Fatal(err)
	}
	down := map[string]string{}
	written += writeFiles(t, m3, "c", 8, 3, down)
	for k, v := range down {
		want[k] = v
	}
	step("wrote 8 files with %s down", n3.Name)
	if err := n3.Start(ctx); err != nil {
		t.Fatal(err)
	}
	step("%s started again", n3.Name)
	waitBrickOnline(ctx, t, c1, ids[n3], victim.Path)
	step("%s's brick online again", n3.Name)
	// What heal-info says of the restarted node's brick until it healed.
	seen := map[string]bool{}
	var order []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		hi, err := c1.HealInfo(ctx, volume, gd2.HealInfoEntries)
		if err != nil {
			t.Fatalf("heal-info: %v", err)
		}
		if s := healSummary(hi); !seen[s] {
			seen[s] = true
			order = append(order, fmt.Sprintf("%.1fs: %s", time.Since(start).Seconds(), s))
		}
		if healed(hi) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("heal-info after %s's restart never read 0 on every connected brick: %s", n3.Name, strings.Join(order, " | "))
		}
		time.Sleep(250 * time.Millisecond)
	}
	step("heal-info after the restart, each reading once: %s", strings.Join(order, " | "))
	indexHeal := func() {
		if err := c1.Heal(ctx, volume, gd2.HealIndex); err != nil {
			t.Logf("index heal: %v", err)
		}
	}
	again = waitBrickHolds(ctx, t, n3, victim.Path, want, 90*time.Second, indexHeal)
	step("%s's brick holds all %d files again (index heal triggered %d times)", n3.Name, len(want), again)
	m3.Unmount()
	m4, err := pool.Mount(ctx, pool.Nodes[3], volume)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, m4, want)
	step("all %d files (%d bytes) read back identical through a fresh mount from %s", len(want), written, pool.Nodes[3].Name)
	m4.Unmount()

	// A clean restart (SIGTERM, as a pod's deletion) of the node that
	// holds the replacement brick: it comes back with its brick and data.
	if err := n4.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	step("%s restarted (SIGTERM, then started)", n4.Name)
	waitBrickOnline(ctx, t, c1, ids[n4], dst.Path)
	waitHealed(ctx, t, c1)
	waitBrickHolds(ctx, t, n4, dst.Path, want, 30*time.Second, nil)
	m5, err := pool.Mount(ctx, pool.Nodes[0], volume)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, m5, want)
	step("%s's brick online, heal-info 0, all %d files on it and read back through a fresh mount", n4.Name, len(want))
}

// waitHealed waits until heal-info reads 0 entries on every brick, all
// connected.
func waitHealed(ctx context.Context, t *testing.T, c *gd2.Client) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		hi, err := c.HealInfo(ctx, volume, gd2.HealInfoEntries)
		if err == nil && healed(hi) {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("heal-info never read 0 on every connected brick: %s (%v)", healSummary(hi), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func client(t *testing.T, n *framework.GD2Node) *gd2.Client {
	t.Helper()
	c, err := n.Client()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func nodeNames(byPeer map[string]*framework.GD2Node, bricks []gd2.BrickInfo) string {
	var names []string
	for _, b := range bricks {
		if n := byPeer[b.PeerID]; n != nil {
			names = append(names, n.Name)
		} else {
			names = append(names, b.PeerID)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func brickOn(t *testing.T, vol *gd2.Volume, peer string) gd2.BrickInfo {
	t.Helper()
	for _, b := range vol.Bricks() {
		if b.PeerID == peer {
			return b
		}
	}
	t.Fatalf("volume %s has no brick on peer %s", vol.Name, peer)
	return gd2.BrickInfo{}
}

// healed: every brick connected with 0 entries.
func healed(hi []gd2.BrickHealInfo) bool {
	for _, b := range hi {
		if b.Status != "Connected" || b.Entries == nil || *b.Entries != 0 {
			return false
		}
	}
	return len(hi) > 0
}

func healSummary(hi []gd2.BrickHealInfo) string {
	var parts []string
	for _, b := range hi {
		e := "absent"
		if b.Entries != nil {
			e = fmt.Sprint(*b.Entries)
		}
		parts = append(parts, fmt.Sprintf("%s %s entries %s", b.Name, b.Status, e))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// writeFiles writes count files under dir through the mount, from a
// stream seeded with seed, and records their checksums in sums. Returns
// the bytes written.
func writeFiles(t *testing.T, m *framework.GlusterMount, dir string, count int, seed uint64, sums map[string]string) int64 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 49))
	if err := os.MkdirAll(m.Path(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	var total int64
	for i := 0; i < count; i++ {
		size := 1 + r.IntN(512<<10)
		if i == 0 {
			size = 4 << 20
		}
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		rel := fmt.Sprintf("%s/f%03d", dir, i)
		if err := os.WriteFile(m.Path(rel), b, 0o644); err != nil {
			t.Fatalf("write %s: %v", rel, err)
		}
		s := sha256.Sum256(b)
		sums[rel] = hex.EncodeToString(s[:])
		total += int64(size)
	}
	return total
}

// verify reads every file of want through the mount and compares.
func verify(t *testing.T, m *framework.GlusterMount, want map[string]string) {
	t.Helper()
	bad := 0
	for rel, sum := range want {
		got, err := framework.FileSHA256(m.Path(rel))
		if err != nil {
			t.Errorf("read %s: %v", rel, err)
			bad++
		} else if got != sum {
			t.Errorf("%s reads back with sha256 %s, wrote %s", rel, got, sum)
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d files do not read back", bad, len(want))
	}
}

// brickSums reads a brick's directory directly (not through Gluster):
// every regular file but GD2's and AFR's own under .glusterfs, with its
// checksum. Missing directories count as empty.
func brickSums(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if root == "" {
		return out
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && rel == ".glusterfs" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		sum, err := framework.FileSHA256(path)
		if err != nil {
			return err
		}
		out[rel] = sum
		return nil
	})
	if err != nil {
		t.Fatalf("read brick %s: %v", root, err)
	}
	return out
}

// waitBrickHolds waits until the brick at path on n holds every file of
// want with its checksum. When nudge is not nil and no file arrived for
// nudgeAfter, it calls nudge (a heal trigger) and returns how many times
// it did.
func waitBrickHolds(ctx context.Context, t *testing.T, n *framework.GD2Node, path string, want map[string]string, limit time.Duration, nudge func()) int {
	t.Helper()
	const nudgeAfter = 8 * time.Second
	deadline := time.Now().Add(limit)
	nudges, best, progressed := 0, -1, time.Now()
	for {
		got := brickSums(t, n.Path(path))
		var missing, differ int
		for rel, sum := range want {
			switch g, ok := got[rel]; {
			case !ok:
				missing++
			case g != sum:
				differ++
			}
		}
		if missing == 0 && differ == 0 {
			return nudges
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("brick %s on %s after %s: %d of %d files missing, %d differ (%d heal triggers)", path, n.Name, limit, missing, len(want), differ, nudges)
		}
		if held := len(want) - missing - differ; held > best {
			best, progressed = held, time.Now()
		} else if nudge != nil && time.Since(progressed) > nudgeAfter {
			t.Logf("brick %s on %s: %d of %d files for %s; heal triggered again", path, n.Name, held, len(want), nudgeAfter)
			nudge()
			nudges++
			progressed = time.Now()
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// bricksOnline waits up to limit for count bricks of the volume online
// and returns how many were.
func bricksOnline(ctx context.Context, t *testing.T, c *gd2.Client, count int, limit time.Duration) int {
	t.Helper()
	return volumeBricksOnline(ctx, c, volume, count, limit)
}

// volumeBricksOnline waits up to limit for count bricks of the named
// volume online and returns how many were.
func volumeBricksOnline(ctx context.Context, c *gd2.Client, volume string, count int, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		st, err := c.BricksStatus(ctx, volume)
		online := 0
		for _, b := range st {
			if b.Online {
				online++
			}
		}
		if err == nil && online == count {
			return online
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return online
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitBricksOnline(ctx context.Context, t *testing.T, c *gd2.Client, count int) {
	t.Helper()
	if on := bricksOnline(ctx, t, c, count, 60*time.Second); on != count {
		t.Fatalf("%d of %d bricks online after a minute", on, count)
	}
}

func waitBrickOnline(ctx context.Context, t *testing.T, c *gd2.Client, peer, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := c.BricksStatus(ctx, volume)
		for _, b := range st {
			if b.Info.PeerID == peer && b.Info.Path == path && b.Online {
				return
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("brick %s of peer %s not online (%v)", path, peer, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
