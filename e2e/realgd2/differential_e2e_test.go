//go:build e2e

package realgd2

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
)

// differencesFile lists every known difference between the simulator and
// real GD2 in the differential scenario, one a line: call | aspect |
// reason.
const differencesFile = "testdata/sim-differences.txt"

// TestSimulatorAnswersTheScenarioAsRealGD2Does runs one scripted scenario
// of the GD2 calls anthill makes (gd2/*.go), refusals included, on a
// 4-node real GD2 pool and on the GD2 simulator started as 4 standalone
// nodes joined by peer add, and compares the two call by call: the HTTP
// status, the response's shape (every JSON key, recursively, with its
// value's type), the error text with ids, addresses, paths and names
// normalised, and the brick placement (which nodes hold the bricks after
// the create and after the replace-brick). Every difference must be listed
// with its reason in testdata/sim-differences.txt, and every listed one
// must still occur; docs/gd2sim.md states their count.
func TestSimulatorAnswersTheScenarioAsRealGD2Does(t *testing.T) {
	listed := readDifferences(t)
	checkDocCount(t, len(listed))
	framework.RequireRealGD2(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	step := func(format string, args ...any) {
		t.Logf("%6.1fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
	}

	pool := startPool(ctx, t)
	step("4 glusterd2 nodes up")
	rl := realTarget(t, pool)
	simT := simTarget(t, rl)

	simEx := runScenario(ctx, t, simT)
	step("scenario on the simulator: %d calls", len(simEx))
	realEx := runScenario(ctx, t, rl)
	step("scenario on real GD2: %d calls", len(realEx))

	for i := range min(len(simEx), len(realEx)) {
		s, r := simEx[i], realEx[i]
		t.Logf("%-34s sim %d %-5d real %d %-5d %s", s.call, s.status, len(s.body), r.status, len(r.body), errorText(r.body))
	}
	if os.Getenv("ANTHILL_DIFF_DUMP") != "" {
		for i := range min(len(simEx), len(realEx)) {
			t.Logf("%s\n  sim:  %s\n  real: %s", simEx[i].call, simEx[i].body, realEx[i].body)
		}
	}
	found := compareRuns(simEx, realEx)
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := listed[k]; !ok {
			t.Errorf("new difference, not in %s: %s | %s", differencesFile, k, found[k])
		}
	}
	for k := range listed {
		if _, ok := found[k]; !ok {
			t.Errorf("%s lists %q, which no longer occurs: remove it (and update the count in docs/gd2sim.md)", differencesFile, k)
		}
	}
	step("%d calls compared, %d differences, all listed with their reasons", len(realEx), len(found))
}

// target is one side of the comparison: four GD2 nodes, clients that
// record every exchange, and what the scenario needs of each node.
type target struct {
	name     string
	rec      *recorder
	clients  [4]*gd2.Client
	peerAddr [4]string
	envIDs   [4]string
	devices  [4]string
	missing  string
}

func realTarget(t *testing.T, pool *framework.GD2Pool) *target {
	tg := &target{name: "real", rec: &recorder{}, missing: pool.Nodes[0].Dir + "/devices/absent"}
	for i, n := range pool.Nodes {
		dev, err := n.LoopDevice("d0")
		if err != nil {
			t.Fatal(err)
		}
		tg.devices[i], tg.peerAddr[i], tg.envIDs[i] = dev, n.PeerAddress(), n.PeerID
		tg.clients[i] = recordingClient(t, n.Endpoint(), pool.Secret, tg.rec, http.DefaultTransport.(*http.Transport).Clone())
	}
	return tg
}

// simTarget is the simulator as four hosts n1..n4, each a standalone GD2
// with the real node's GD2_PEER_ID and its loop device's directory (the
// size of the file system it is on), served over real HTTP; each client
// addresses its host by name.
func simTarget(t *testing.T, real *target) *target {
	secret := strings.Repeat("ab", 32)
	s, err := sim.New(sim.Config{Secret: secret, Seed: 49})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	tg := &target{name: "sim", rec: &recorder{}, missing: real.missing}
	for i := range 4 {
		name := fmt.Sprintf("n%d", i+1)
		if err := s.UpsertHost(sim.HostSpec{Name: name, Alive: true, PeerID: real.envIDs[i]}); err != nil {
			t.Fatal(err)
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(real.devices[i], &st); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDeviceSizes(name, map[string]uint64{real.devices[i]: st.Blocks * uint64(st.Bsize)}); err != nil {
			t.Fatal(err)
		}
		tg.devices[i], tg.peerAddr[i], tg.envIDs[i] = real.devices[i], name+":24008", real.envIDs[i]
		tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		}}
		tg.clients[i] = recordingClient(t, "http://"+name+":24007", secret, tg.rec, tr)
	}
	return tg
}

func recordingClient(t *testing.T, endpoint, secret string, rec *recorder, tr http.RoundTripper) *gd2.Client {
	t.Helper()
	c, err := gd2.New(gd2.Options{
		Endpoint: endpoint, Secret: secret, Timeout: 2 * time.Minute,
		HTTPClient: &http.Client{Transport: recordingTransport{rec: rec, next: tr}},
		Retry:      &gd2.RetryPolicy{MaxAttempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exchange is one HTTP request and its answer.
type exchange struct {
	call   string
	method string
	path   string
	status int
	body   []byte
	// placement, set on the calls after which the bricks' nodes are
	// compared: the node index (1..4) of every brick, sorted.
	placement string
}

type recorder struct {
	mu  sync.Mutex
	got []exchange
}

func (r *recorder) take() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

type recordingTransport struct {
	rec  *recorder
	next http.RoundTripper
}

func (rt recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	rt.rec.mu.Lock()
	rt.rec.got = append(rt.rec.got, exchange{method: req.Method, path: req.URL.Path, status: resp.StatusCode, body: body})
	rt.rec.mu.Unlock()
	return resp, nil
}

// runScenario runs the scripted calls on one target and returns every
// exchange, named by its call.
func runScenario(ctx context.Context, t *testing.T, tg *target) []exchange {
	t.Helper()
	const vol, missingVol = "dv", "nosuchvolume"
	var out []exchange
	// call runs one step and keeps its exchanges (the last answer to each
	// distinct request: a hedged read may be sent twice).
	call := func(name string, f func() error) error {
		tg.rec.take()
		err := f()
		got := tg.rec.take()
		var kept []exchange
		for _, e := range got {
			replaced := false
			for i := range kept {
				if kept[i].method == e.method && kept[i].path == e.path {
					kept[i], replaced = e, true
				}
			}
			if !replaced {
				kept = append(kept, e)
			}
		}
		for i, e := range kept {
			e.call = name
			if len(kept) > 1 {
				e.call = fmt.Sprintf("%s [%d]", name, i+1)
			}
			out = append(out, e)
		}
		return err
	}
	must := func(name string, f func() error) {
		t.Helper()
		if err := call(name, f); err != nil {
			t.Fatalf("%s: %s: %v", tg.name, name, err)
		}
	}
	refused := func(name string, f func() error) {
		t.Helper()
		if err := call(name, f); err == nil {
			t.Errorf("%s: %s: accepted, expected a refusal", tg.name, name)
		}
	}
	c1 := tg.clients[0]
	ids := map[string]int{}
	placement := func(v *gd2.Volume) string {
		var at []string
		for _, b := range v.Bricks() {
			at = append(at, strconv.Itoa(ids[b.PeerID]))
		}
		sort.Strings(at)
		return strings.Join(at, ",")
	}

	must("ping", func() error { return c1.Ping(ctx) })
	must("peer list (alone)", func() error { _, err := c1.ListPeers(ctx, gd2.Filter{}); return err })
	ids[tg.envIDs[0]] = 1
	for i := 1; i < 4; i++ {
		must("peer add", func() error {
			p, err := c1.AddPeer(ctx, gd2.PeerAddRequest{Addresses: []string{tg.peerAddr[i]}})
			if err == nil {
				ids[p.ID] = i + 1
			}
			return err
		})
	}
	must("peer list", func() error { _, err := c1.ListPeers(ctx, gd2.Filter{}); return err })
	must("peer get", func() error { _, err := c1.GetPeer(ctx, tg.envIDs[1]); return err })
	refused("device add (no such path)", func() error {
		_, err := c1.AddDevice(ctx, tg.envIDs[0], gd2.DeviceAddRequest{Device: tg.missing, Provisioner: gd2.ProvisionerLoop})
		return err
	})
	for i := range 4 {
		must("device add", func() error {
			_, err := c1.AddDevice(ctx, tg.envIDs[i], gd2.DeviceAddRequest{Device: tg.devices[i], Provisioner: gd2.ProvisionerLoop})
			return err
		})
	}
	must("device list (peer)", func() error { _, err := c1.ListDevices(ctx, tg.envIDs[1]); return err })
	must("device list (all)", func() error { _, err := c1.ListAllDevices(ctx); return err })
	refused("volume get (missing)", func() error { _, err := c1.GetVolume(ctx, missingVol); return err })

	create := gd2.VolumeCreateRequest{
		Name: vol, Size: brickSize, Replica: 3, Provisioner: gd2.ProvisionerLoop,
		LimitPeers: []string{tg.envIDs[0], tg.envIDs[1], tg.envIDs[2]},
	}
	var v *gd2.Volume
	for try := 0; ; try++ {
		// GD2 sometimes answers a smart create 500 "volume not found" and
		// creates nothing (a race in its transaction code): that answer is
		// not compared, the create is sent again.
		tg.rec.take()
		var err error
		v, err = c1.CreateVolume(ctx, create)
		if err == nil || try == 2 || !strings.Contains(err.Error(), "volume not found") {
			e := tg.rec.take()
			if len(e) > 0 {
				last := e[len(e)-1]
				last.call = "volume create (smart, replica 3)"
				out = append(out, last)
			}
			if err != nil {
				t.Fatalf("%s: smart create: %v", tg.name, err)
			}
			break
		}
		t.Logf("%s: smart create: %v; again", tg.name, err)
	}
	out[len(out)-1].placement = placement(v)
	refused("volume create (name taken)", func() error { _, err := c1.CreateVolume(ctx, create); return err })
	must("volume list", func() error { _, err := c1.ListVolumes(ctx, gd2.Filter{}); return err })
	must("volume get", func() error { _, err := c1.GetVolume(ctx, vol); return err })
	must("volume start", func() error { _, err := c1.StartVolume(ctx, vol, false); return err })
	if on := volumeBricksOnline(ctx, c1, vol, 3, 15*time.Second); on < 3 {
		// GD2 once answered a start 200 without starting any brick.
		t.Logf("%s: %d of 3 bricks online 15s after the start: started again with force-start-bricks", tg.name, on)
		if _, err := c1.StartVolume(ctx, vol, true); err != nil {
			t.Fatalf("%s: volume start (force): %v", tg.name, err)
		}
	}
	if on := volumeBricksOnline(ctx, c1, vol, 3, 60*time.Second); on < 3 {
		t.Fatalf("%s: %d of 3 bricks online after a minute", tg.name, on)
	}
	refused("volume start (started)", func() error { _, err := c1.StartVolume(ctx, vol, false); return err })
	must("volume status", func() error { _, err := c1.VolumeStatus(ctx, vol); return err })
	must("bricks status", func() error { _, err := c1.BricksStatus(ctx, vol); return err })
	must("volume options set", func() error {
		_, err := c1.SetVolumeOptions(ctx, vol, gd2.VolumeOptionRequest{Options: map[string]string{gd2.OptionSelfHealDaemon: "on"}, AllowAdvanced: true})
		return err
	})
	must("volume option get", func() error { _, err := c1.VolumeOption(ctx, vol, "replicate.self-heal-daemon"); return err })
	must("heal-info", func() error { _, err := c1.HealInfo(ctx, vol, gd2.HealInfoEntries); return err })
	refused("volume delete (started)", func() error { return c1.DeleteVolume(ctx, vol) })

	// A replace-brick is served by the node that holds the source brick.
	var src gd2.BrickInfo
	for _, b := range v.Bricks() {
		if ids[b.PeerID] == 2 {
			src = b
		}
	}
	c2 := tg.clients[1]
	refused("replace-brick (no such brick)", func() error {
		_, err := c2.ReplaceBrick(ctx, vol, gd2.ReplaceBrickRequest{SrcPeerID: src.PeerID, SrcBrickPath: src.Path + "-absent"})
		return err
	})
	must("replace-brick", func() error {
		var err error
		v, err = c2.ReplaceBrick(ctx, vol, gd2.ReplaceBrickRequest{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
		return err
	})
	out[len(out)-1].placement = placement(v)
	must("volume stop", func() error { _, err := c1.StopVolume(ctx, vol); return err })
	// Nothing after the delete is compared: real GD2 at times answers the
	// delete 204 while its vol-delete.CleanBricks step failed ("key not
	// found" in its log) and keeps listing the volume.
	must("volume delete", func() error { return c1.DeleteVolume(ctx, vol) })
	return out
}

// compareRuns compares the two runs call by call and returns each
// difference, keyed "call | aspect", with what each side answered.
func compareRuns(simEx, realEx []exchange) map[string]string {
	found := map[string]string{}
	add := func(call, aspect, detail string) {
		k := call + " | " + aspect
		if prev, ok := found[k]; ok {
			detail = prev + "; " + detail
		}
		found[k] = detail
	}
	n := max(len(simEx), len(realEx))
	for i := range n {
		if i >= len(simEx) || i >= len(realEx) || simEx[i].call != realEx[i].call {
			call := "?"
			if i < len(realEx) {
				call = realEx[i].call
			}
			add(call, "sequence", fmt.Sprintf("call %d: the runs made different calls", i+1))
			break
		}
		s, r := simEx[i], realEx[i]
		if s.status != r.status {
			add(s.call, "status", fmt.Sprintf("sim %d, real %d", s.status, r.status))
		}
		ss, sv := shapeOf(s.body)
		rs, rv := shapeOf(r.body)
		for _, p := range unionKeys(ss, rs) {
			if ss[p] != rs[p] {
				add(s.call, "shape "+p, fmt.Sprintf("sim %s, real %s", orAbsent(ss[p]), orAbsent(rs[p])))
			}
		}
		for _, p := range unionKeys(sv, rv) {
			if ss[p] == rs[p] && sv[p] != rv[p] {
				add(s.call, "value "+p, fmt.Sprintf("sim %s, real %s", sv[p], rv[p]))
			}
		}
		if s.status >= 400 || r.status >= 400 {
			st, rt := errorText(s.body), errorText(r.body)
			if st != rt {
				add(s.call, "error text", fmt.Sprintf("sim %q, real %q", st, rt))
			}
		}
		if s.placement != r.placement {
			add(s.call, "placement", fmt.Sprintf("sim on nodes %s, real on nodes %s", s.placement, r.placement))
		}
	}
	return found
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

// unionKeys is the keys of a and b, sorted, each once.
func unionKeys(a, b map[string]string) []string {
	all := maps.Clone(a)
	maps.Copy(all, b)
	return slices.Sorted(maps.Keys(all))
}

var uuidRE = regexp.MustCompile(`(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// shapeOf is every path of a JSON document ("$" the root, ".key" a
// member, "[]" any element) with the types its values take there,
// "|"-joined, and the string and boolean values found there (strings
// normalised as error text is), sorted. Numbers (sizes, pids, ports) are
// compared by type only. Object keys that are ids or paths (a brick's, a
// device's) read as <id> and <path>. An empty body is "empty".
func shapeOf(body []byte) (shape, values map[string]string) {
	out := map[string]string{}
	values = map[string]string{}
	if len(bytes.TrimSpace(body)) == 0 {
		out["$"] = "empty"
		return out, values
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		out["$"] = "not-json"
		return out, values
	}
	types := map[string]map[string]bool{}
	seen := map[string][]string{}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		if types[p] == nil {
			types[p] = map[string]bool{}
		}
		switch x := v.(type) {
		case map[string]any:
			types[p]["object"] = true
			for k, e := range x {
				switch {
				case uuidRE.MatchString(k):
					k = "<id>"
				case strings.HasPrefix(k, "/"):
					k = "<path>"
				}
				walk(p+"."+k, e)
			}
		case []any:
			types[p]["array"] = true
			for _, e := range x {
				walk(p+"[]", e)
			}
		case string:
			types[p]["string"] = true
			seen[p] = append(seen[p], strconv.Quote(normalise(x)))
		case json.Number:
			types[p]["number"] = true
		case bool:
			types[p]["bool"] = true
			seen[p] = append(seen[p], strconv.FormatBool(x))
		case nil:
			types[p]["null"] = true
		}
	}
	walk("$", v)
	for p, ts := range types {
		var l []string
		for t := range ts {
			l = append(l, t)
		}
		sort.Strings(l)
		out[p] = strings.Join(l, "|")
	}
	for p, l := range seen {
		sort.Strings(l)
		values[p] = strings.Join(l, ",")
	}
	return out, values
}

var (
	idTextRE   = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	addrTextRE = regexp.MustCompile(`\b(?:\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|n\d)(?::\d+)?\b`)
	pathTextRE = regexp.MustCompile(`/[^\s"',;:()\[\]]+`)
	nameTextRE = regexp.MustCompile(`\b(?:dv|nosuchvolume)\b`)
)

// errorText is the error messages of a GD2 error body, "; "-joined, with
// ids, addresses, paths and the scenario's volume names normalised.
func errorText(body []byte) string {
	var e struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "(no error body)"
	}
	var msgs []string
	for _, m := range e.Errors {
		msgs = append(msgs, normalise(m.Message))
	}
	return strings.Join(msgs, "; ")
}

// normalise replaces ids, paths, addresses and the scenario's volume
// names in a text.
func normalise(s string) string {
	s = idTextRE.ReplaceAllString(s, "<id>")
	s = pathTextRE.ReplaceAllString(s, "<path>")
	s = addrTextRE.ReplaceAllString(s, "<addr>")
	return nameTextRE.ReplaceAllString(s, "<volume>")
}

// readDifferences reads the listed differences: "call | aspect | reason"
// lines, "#" comments and blank lines skipped. Keyed "call | aspect".
func readDifferences(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(differencesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, " | ")
		if len(parts) != 3 || strings.TrimSpace(parts[2]) == "" {
			t.Fatalf("%s:%d: want \"call | aspect | reason\", got %q", differencesFile, ln, line)
		}
		k := parts[0] + " | " + parts[1]
		if _, dup := out[k]; dup {
			t.Fatalf("%s:%d: %q listed twice", differencesFile, ln, k)
		}
		out[k] = parts[2]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var docCountRE = regexp.MustCompile(`(\d+) differences? listed`)

// checkDocCount holds docs/gd2sim.md's stated count to the file.
func checkDocCount(t *testing.T, n int) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/gd2sim.md")
	if err != nil {
		t.Fatal(err)
	}
	m := docCountRE.FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/gd2sim.md does not state how many differences %s lists (\"N differences listed\")", differencesFile)
	}
	if got, _ := strconv.Atoi(string(m[1])); got != n {
		t.Errorf("docs/gd2sim.md says %d differences listed, %s lists %d", got, differencesFile, n)
	}
}
