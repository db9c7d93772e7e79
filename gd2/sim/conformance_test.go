package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// The conformance test replays, over real HTTP, the 36 calls that
// testdata/gd2-real-transcript.json recorded against a real GD2 (made by
// the project's gd2-transcript.py), in the same order with the same bodies,
// and compares what the tool compares: status, the JSON shape (keys and
// value types), error messages with UUIDs normalised, and a few kept
// values. Every step must match.
//
// The recording was made against node 1's own address, so every request
// here is addressed to host gd2-1. The second node is a standalone host
// added as peer 2. Both have fixed ids (GD2_PEER_ID) so that the peer list,
// ordered by UUID string, lists peer 2 first, as it happened to in the
// recording (a list's shape is its first element's).

const (
	confPeer1 = "d1000000-0000-4000-8000-000000000001"
	confPeer2 = "21000000-0000-4000-8000-000000000002"
	confAddr2 = "gd2-2:24008"
	confBrick = "/srv/gd2-transcript"
)

var (
	confUUID     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	confUUIDAny  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	confKeptKeys = []string{"count", "state", "online", "metadata", "type", "brick_status"}
)

// confShape is the tool's shape(): keys kept (sorted by encoding), lists
// reduced to their first element, values abstracted to bool, num, uuid,
// str or null.
func confShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = confShape(e)
		}
		return out
	case []any:
		if len(x) == 0 {
			return []any{}
		}
		return []any{confShape(x[0])}
	case bool:
		return "bool"
	case float64:
		return "num"
	case nil:
		return nil
	case string:
		if confUUID.MatchString(x) {
			return "uuid"
		}
	}
	return "str"
}

// normJSON round-trips v through JSON so values compare like decoded ones.
func normJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type confStep struct {
	name, method, path string
	status             int
	shape              any
	messages           []string
	kept               map[string]any
	js                 any
}

type confRun struct {
	t      *testing.T
	srv    *httptest.Server
	clock  *clocktesting.FakeClock
	secret string
	steps  []confStep
}

type confCall struct {
	body    any
	raw     *string
	noAuth  bool
	qshPath string
	keep    map[string]func(js any) any
}

func (r *confRun) call(name, method, path string, o confCall) any {
	r.t.Helper()
	var rd io.Reader
	switch {
	case o.raw != nil:
		rd = strings.NewReader(*o.raw)
	case o.body != nil:
		b, err := json.Marshal(o.body)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.srv.URL+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Host = "gd2-1:24007"
	req.Header.Set("Content-Type", "application/json")
	if !o.noAuth {
		qp := o.qshPath
		if qp == "" {
			qp = strings.SplitN(path, "?", 2)[0]
		}
		tok, err := Token(r.secret, method, qp, r.clock.Now(), 120*time.Second)
		if err != nil {
			r.t.Fatal(err)
		}
		req.Header.Set("Authorization", "bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		r.t.Fatal(err)
	}
	var js any
	if strings.TrimSpace(string(text)) != "" {
		if err := json.Unmarshal(text, &js); err != nil {
			js = "<non-json>"
		}
	}
	st := confStep{name: name, method: method, path: path, status: resp.StatusCode, shape: confShape(js), js: js, kept: map[string]any{}}
	if m, ok := js.(map[string]any); ok {
		if errs, ok := m["errors"].([]any); ok {
			st.messages = []string{}
			for _, e := range errs {
				msg, _ := e.(map[string]any)["message"].(string)
				st.messages = append(st.messages, msg)
			}
		}
	}
	for k, f := range o.keep {
		st.kept[k] = normJSON(r.t, f(js))
	}
	r.steps = append(r.steps, st)
	return js
}

func field(js any, k string) any {
	if m, ok := js.(map[string]any); ok {
		return m[k]
	}
	return nil
}

func count(js any) any {
	l, _ := js.([]any)
	return len(l)
}

// replay is gd2-transcript.py's sequence.
func (r *confRun) replay(peer2, brickdir string) {
	r.t.Helper()
	r.call("ping", "GET", "/ping", confCall{noAuth: true})
	r.call("version-noauth", "GET", "/version", confCall{noAuth: true})
	r.call("version", "GET", "/version", confCall{})
	r.call("peers-bad-qsh", "GET", "/v1/peers", confCall{qshPath: "/v1/volumes"})
	peers := r.call("peers-1", "GET", "/v1/peers", confCall{keep: map[string]func(any) any{"count": count}})
	p1, _ := field(peers.([]any)[0], "id").(string)
	p2obj := r.call("peer-add", "POST", "/v1/peers", confCall{
		body: map[string]any{"addresses": []string{peer2}, "zone": "zone-b", "metadata": map[string]string{"rack": "r1"}},
		keep: map[string]func(any) any{"online": func(j any) any { return field(j, "online") }, "metadata": func(j any) any { return field(j, "metadata") }},
	})
	p2, _ := field(p2obj, "id").(string)
	r.call("peer-add-again", "POST", "/v1/peers", confCall{body: map[string]any{"addresses": []string{peer2}}})
	r.call("peers-2", "GET", "/v1/peers", confCall{keep: map[string]func(any) any{"count": count}})
	r.call("peers-filter", "GET", "/v1/peers?key=rack&value=r1", confCall{keep: map[string]func(any) any{"count": count}})
	r.call("peer-edit-reserved", "POST", "/v1/peers/"+p2, confCall{body: map[string]any{"metadata": map[string]string{"_x": "y"}}})
	r.call("peer-edit", "POST", "/v1/peers/"+p2, confCall{
		body: map[string]any{"zone": "zone-c", "metadata": map[string]string{"anthill-state": "Online"}},
		keep: map[string]func(any) any{"online": func(j any) any { return field(j, "online") }, "metadata": func(j any) any { return field(j, "metadata") }},
	})
	r.call("peer-get", "GET", "/v1/peers/"+p2, confCall{
		keep: map[string]func(any) any{"metadata": func(j any) any { return field(j, "metadata") }, "online": func(j any) any { return field(j, "online") }},
	})
	r.call("peer-get-unknown", "GET", "/v1/peers/00000000-0000-0000-0000-000000000000", confCall{})
	r.call("peer-get-bad-id", "GET", "/v1/peers/not-a-uuid", confCall{})
	garbage := "garbage"
	r.call("peer-add-garbage", "POST", "/v1/peers", confCall{raw: &garbage})
	vol := map[string]any{
		"name": "tv",
		"subvols": []any{map[string]any{"type": "replicate", "replica": 2, "bricks": []any{
			map[string]any{"peerid": p1, "path": brickdir + "/b1"}, map[string]any{"peerid": p2, "path": brickdir + "/b2"}}}},
		"force": true, "flags": map[string]bool{"allow-root-dir": true, "create-brick-dir": true},
	}
	state := func(j any) any { return field(j, "state") }
	r.call("vol-create", "POST", "/v1/volumes", confCall{body: vol, keep: map[string]func(any) any{"state": state, "type": func(j any) any { return field(j, "type") }}})
	r.call("vol-create-again", "POST", "/v1/volumes", confCall{body: vol})
	r.call("vol-list", "GET", "/v1/volumes", confCall{keep: map[string]func(any) any{"count": count}})
	r.call("vol-info", "GET", "/v1/volumes/tv", confCall{keep: map[string]func(any) any{"state": state}})
	r.call("heal-not-started", "GET", "/v1/volumes/tv/heal-info", confCall{})
	r.call("vol-start", "POST", "/v1/volumes/tv/start", confCall{keep: map[string]func(any) any{"state": state}})
	r.call("vol-bricks", "GET", "/v1/volumes/tv/bricks", confCall{keep: map[string]func(any) any{"count": count}})
	r.call("vol-status", "GET", "/v1/volumes/tv/status", confCall{})
	r.call("heal-info", "GET", "/v1/volumes/tv/heal-info", confCall{keep: map[string]func(any) any{"brick_status": func(j any) any {
		l, _ := j.([]any)
		out := []string{}
		for _, b := range l {
			s, _ := field(b, "status").(string)
			out = append(out, s)
		}
		sort.Strings(out)
		return out
	}}})
	r.call("heal-summary", "GET", "/v1/volumes/tv/info-summary/heal-info", confCall{})
	r.call("heal-bad-opts", "GET", "/v1/volumes/tv/info/heal-info", confCall{})
	r.call("heal-unknown-vol", "GET", "/v1/volumes/nosuch/heal-info", confCall{})
	r.call("heal-trigger-disabled", "POST", "/v1/volumes/tv/heal", confCall{})
	r.call("peer-delete-has-bricks", "DELETE", "/v1/peers/"+p2, confCall{})
	r.call("peer-delete-self", "DELETE", "/v1/peers/"+p1, confCall{})
	r.call("vol-stop", "POST", "/v1/volumes/tv/stop", confCall{})
	r.call("vol-delete", "DELETE", "/v1/volumes/tv", confCall{})
	r.call("vol-info-gone", "GET", "/v1/volumes/tv", confCall{})
	r.call("devices", "GET", "/v1/devices", confCall{})
	r.call("peer-delete", "DELETE", "/v1/peers/"+p2, confCall{})
	r.call("peers-end", "GET", "/v1/peers", confCall{keep: map[string]func(any) any{"count": count}})
}

type confRef struct {
	Step     string   `json:"step"`
	Method   string   `json:"method"`
	Status   int      `json:"status"`
	Shape    any      `json:"shape"`
	Messages []string `json:"messages"`
	raw      map[string]any
}

func loadConfRef(t *testing.T) []confRef {
	t.Helper()
	b, err := os.ReadFile("testdata/gd2-real-transcript.json")
	if err != nil {
		t.Fatal(err)
	}
	var refs []confRef
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	var raws []map[string]any
	if err := json.Unmarshal(b, &raws); err != nil {
		t.Fatal(err)
	}
	for i := range refs {
		refs[i].raw = raws[i]
	}
	return refs
}

func normIDs(ms []string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = confUUIDAny.ReplaceAllString(m, "{id}")
	}
	return out
}

// diffStep compares one step as the tool's --compare does: only what the
// recording has.
func diffStep(want confRef, got confStep) []string {
	var d []string
	if want.Step != got.name || want.Method != got.method {
		d = append(d, fmt.Sprintf("step: real=%s %s ours=%s %s", want.Method, want.Step, got.method, got.name))
	}
	if want.Status != got.status {
		d = append(d, fmt.Sprintf("status: real=%d ours=%d", want.Status, got.status))
	}
	if !reflect.DeepEqual(want.Shape, got.shape) {
		w, _ := json.Marshal(want.Shape)
		g, _ := json.Marshal(got.shape)
		d = append(d, fmt.Sprintf("shape: real=%s ours=%s", w, g))
	}
	if _, ok := want.raw["messages"]; ok && !reflect.DeepEqual(normIDs(want.Messages), normIDs(got.messages)) {
		d = append(d, fmt.Sprintf("messages: real=%q ours=%q", normIDs(want.Messages), normIDs(got.messages)))
	}
	for _, k := range confKeptKeys {
		w, ok := want.raw[k]
		if !ok {
			continue
		}
		if g := got.kept[k]; !reflect.DeepEqual(w, g) {
			d = append(d, fmt.Sprintf("%s: real=%v ours=%v", k, w, g))
		}
	}
	return d
}

func TestConformanceWithRealGD2Transcript(t *testing.T) {
	refs := loadConfRef(t)
	fc := clocktesting.NewFakeClock(time.Now())
	s, err := New(Config{Secret: testSecret, Seed: 1, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	// Node 1 bootstraps the cluster; node 2 runs standalone until added.
	for _, hs := range []HostSpec{{Name: "gd2-1", Alive: true, PeerID: confPeer1}, {Name: "gd2-2", Alive: true, PeerID: confPeer2}} {
		if err := s.UpsertHost(hs); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	r := &confRun{t: t, srv: srv, clock: fc, secret: testSecret}
	r.replay(confAddr2, confBrick)

	if len(r.steps) != len(refs) {
		t.Fatalf("replayed %d steps, the recording has %d", len(r.steps), len(refs))
	}
	match := 0
	for i, st := range r.steps {
		if d := diffStep(refs[i], st); len(d) > 0 {
			t.Errorf("DIFF %s: %s", st.name, strings.Join(d, "; "))
			continue
		}
		match++
	}
	t.Logf("%d of %d steps match real GD2", match, len(refs))
	if match != len(refs) {
		t.Errorf("%d of %d steps match real GD2, want all", match, len(refs))
	}
}
