package gd2_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
)

// The contract suite runs the client against the simulator over real HTTP
// for every endpoint and error path of the GD2 fact sheet. Each case says,
// in its name, what GD2 does; expectations follow the sheet, not the
// simulator. Where the two disagreed while this suite was written, the case
// carries a "sheet vs sim" comment.

// contractCase is one request and the answer the sheet promises.
type contractCase struct {
	name   string
	cfg    func(*sim.Config)
	setup  func(t *testing.T, e *env)
	call   func(t *testing.T, e *env) error // also checks the decoded answer
	op     gd2.Operation                    // whose status is checked
	status int                              // GD2's status code
	want   error                            // sentinel; nil means success
}

func runContract(t *testing.T, cases []contractCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mut []func(*sim.Config)
			if tc.cfg != nil {
				mut = append(mut, tc.cfg)
			}
			e := newEnv(t, mut...)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			before := len(e.log.statuses(tc.op))
			err := tc.call(t, e)
			got := e.log.statuses(tc.op)
			if len(got) <= before {
				t.Fatalf("no %s request was observed (err %v)", tc.op, err)
			}
			if status := got[len(got)-1]; status != tc.status {
				t.Errorf("status %d, want %d (err %v)", status, tc.status, err)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			if tc.want != errPlain && !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			var apiErr *gd2.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.status || apiErr.Op != tc.op {
				t.Fatalf("want *APIError{Status:%d Op:%s}, got %#v", tc.status, tc.op, err)
			}
		})
	}
}

var bg = context.Background()

// errPlain marks cases where the sheet promises only a status: any
// *APIError with it passes.
var errPlain = errors.New("any *gd2.APIError")

func TestContractUnversionedEndpointsAndAuth(t *testing.T) {
	runContract(t, []contractCase{
		{
			name: "ping answers 200 with an empty body and needs no token",
			call: func(t *testing.T, e *env) error {
				return e.client(func(o *gd2.Options) { o.Secret = "" }).Ping(bg)
			},
			op: gd2.OpPing, status: 200,
		},
		{
			name: "version answers 200 with api-version 1",
			cfg:  func(c *sim.Config) { c.Version = "v6.0-anthill" },
			call: func(t *testing.T, e *env) error {
				v, err := e.c.Version(bg)
				if err == nil && (v.APIVersion != 1 || v.GlusterdVersion != "v6.0-anthill") {
					t.Errorf("version %+v", v)
				}
				return err
			},
			op: gd2.OpVersion, status: 200,
		},
		{
			name: "version without a token is 401 because only ping and endpoints are exempt",
			call: func(t *testing.T, e *env) error {
				_, err := e.client(func(o *gd2.Options) { o.Secret = "" }).Version(bg)
				return err
			},
			op: gd2.OpVersion, status: 401, want: gd2.ErrUnauthorized,
		},
		{
			name: "endpoints answers 200 without a token and lists paths without /v1",
			call: func(t *testing.T, e *env) error {
				eps, err := e.client(func(o *gd2.Options) { o.Secret = "" }).Endpoints(bg)
				if err != nil {
					return err
				}
				var found bool
				for _, ep := range eps {
					if strings.HasPrefix(ep.Path, "/v1") {
						t.Errorf("endpoint path %q keeps /v1", ep.Path)
					}
					if ep.Path == "/peers" && slices.Contains(ep.Methods, http.MethodGet) {
						found = true
					}
				}
				if !found {
					t.Error("GET /peers is not listed")
				}
				return nil
			},
			op: gd2.OpEndpoints, status: 200,
		},
		{
			name: "a resource call without a token is 401",
			call: func(t *testing.T, e *env) error {
				_, err := e.client(func(o *gd2.Options) { o.Secret = "" }).ListPeers(bg, gd2.Filter{})
				return err
			},
			op: gd2.OpPeersList, status: 401, want: gd2.ErrUnauthorized,
		},
		{
			name: "a token signed with another secret is 401",
			call: func(t *testing.T, e *env) error {
				_, err := e.client(func(o *gd2.Options) { o.Secret = strings.Repeat("ab", 32) }).ListPeers(bg, gd2.Filter{})
				return err
			},
			op: gd2.OpPeersList, status: 401, want: gd2.ErrUnauthorized,
		},
		{
			name: "a token from an issuer other than glustercli is 401",
			call: func(t *testing.T, e *env) error {
				_, err := e.client(func(o *gd2.Options) { o.User = "anthill" }).ListPeers(bg, gd2.Filter{})
				return err
			},
			op: gd2.OpPeersList, status: 401, want: gd2.ErrUnauthorized,
		},
		{
			name: "an expired token is 401 because GD2 allows no leeway",
			call: func(t *testing.T, e *env) error {
				past := func() time.Time { return e.clock.Now().Add(-10 * time.Minute) }
				_, err := e.client(func(o *gd2.Options) { o.Now = past }).ListPeers(bg, gd2.Filter{})
				return err
			},
			op: gd2.OpPeersList, status: 401, want: gd2.ErrUnauthorized,
		},
		{
			name: "a token for another path fails the qsh check with 401 before routing",
			call: func(t *testing.T, e *env) error {
				// A path prefix makes the client sign /v1/peers while the
				// server sees /prefix/v1/peers.
				c := e.client(func(o *gd2.Options) { o.Endpoint = e.url + "/prefix" })
				_, err := c.ListPeers(bg, gd2.Filter{})
				return err
			},
			op: gd2.OpPeersList, status: 401, want: gd2.ErrUnauthorized,
		},
		{
			name: "an unknown path with auth off is the router's plain-text 404, still typed",
			cfg:  func(c *sim.Config) { c.Secret = "" },
			call: func(t *testing.T, e *env) error {
				c := e.client(func(o *gd2.Options) { o.Endpoint = e.url + "/prefix"; o.Secret = "" })
				_, err := c.GetVolume(bg, "vol1")
				var apiErr *gd2.APIError
				if errors.As(err, &apiErr) && (len(apiErr.Errors) != 0 || apiErr.Body == "") {
					t.Errorf("plain-text body should land in Body: %#v", apiErr)
				}
				return err
			},
			op: gd2.OpVolumesGet, status: 404, want: gd2.ErrNotFound,
		},
	})
}

func TestContractPeers(t *testing.T) {
	tagPeer := func(meta map[string]string) func(*testing.T, *env) {
		return func(t *testing.T, e *env) {
			_, err := e.c.EditPeer(bg, e.peers[1].ID, gd2.PeerEditRequest{Metadata: meta})
			e.must(err, "tag peer")
		}
	}
	runContract(t, []contractCase{
		{
			name: "listing peers answers 200 with every member, its zone and live addresses",
			call: func(t *testing.T, e *env) error {
				ps, err := e.c.ListPeers(bg, gd2.Filter{})
				if err != nil {
					return err
				}
				if len(ps) != 3 {
					t.Fatalf("%d peers", len(ps))
				}
				if !slices.IsSortedFunc(ps, func(a, b gd2.Peer) int { return strings.Compare(a.ID, b.ID) }) {
					t.Error("peers are not in UUID order")
				}
				for _, p := range ps {
					if p.Zone() == "" || len(p.PeerAddresses) == 0 || len(p.ClientAddresses) == 0 || !p.Online || p.PID == 0 {
						t.Errorf("incomplete peer %+v", p)
					}
				}
				return nil
			},
			op: gd2.OpPeersList, status: 200,
		},
		{
			name:  "filtering peers by key alone returns the peers having the key",
			setup: tagPeer(map[string]string{"anthill-state": "Online"}),
			call: func(t *testing.T, e *env) error {
				ps, err := e.c.ListPeers(bg, gd2.Filter{Key: "anthill-state"})
				if err == nil && (len(ps) != 1 || ps[0].ID != e.peers[1].ID) {
					t.Errorf("got %d peers", len(ps))
				}
				return err
			},
			op: gd2.OpPeersList, status: 200,
		},
		{
			name:  "filtering peers by value alone repeats a peer once per matching key",
			setup: tagPeer(map[string]string{"a": "x", "b": "x"}),
			call: func(t *testing.T, e *env) error {
				ps, err := e.c.ListPeers(bg, gd2.Filter{Value: "x"})
				if err == nil && (len(ps) != 2 || ps[0].ID != e.peers[1].ID || ps[1].ID != e.peers[1].ID) {
					t.Errorf("got %+v", ps)
				}
				return err
			},
			op: gd2.OpPeersList, status: 200,
		},
		{
			name:  "filtering peers by key and value needs the exact value",
			setup: tagPeer(map[string]string{"anthill-state": "Online"}),
			call: func(t *testing.T, e *env) error {
				hit, err := e.c.ListPeers(bg, gd2.Filter{Key: "anthill-state", Value: "Online"})
				if err != nil {
					return err
				}
				miss, err := e.c.ListPeers(bg, gd2.Filter{Key: "anthill-state", Value: "Offline"})
				if len(hit) != 1 || len(miss) != 0 {
					t.Errorf("hit %d, miss %d", len(hit), len(miss))
				}
				return err
			},
			op: gd2.OpPeersList, status: 200,
		},
		{
			name: "getting a peer answers 200 with its addresses and pid",
			call: func(t *testing.T, e *env) error {
				p, err := e.c.GetPeer(bg, e.peers[0].ID)
				if err == nil && (p.ID != e.peers[0].ID || p.Name != "gd2-1" || !p.Online || p.PID == 0 || p.Zone() != "zone-1") {
					t.Errorf("peer %+v", p)
				}
				return err
			},
			op: gd2.OpPeersGet, status: 200,
		},
		{
			name: "getting a peer by a malformed id is 400",
			call: func(t *testing.T, e *env) error { _, err := e.c.GetPeer(bg, "not-a-uuid"); return err },
			op:   gd2.OpPeersGet, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "getting an unknown peer is 404",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.GetPeer(bg, "5d8f2c1e-0000-4000-8000-000000000001")
				return err
			},
			op: gd2.OpPeersGet, status: 404, want: gd2.ErrNotFound,
		},
		{
			name: "adding a peer answers 201 with a new id, the zone, the metadata and online true without pid",
			call: func(t *testing.T, e *env) error {
				p, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-4"}, Zone: "zone-1",
					Metadata: map[string]string{"anthill-node": "node-4"}})
				if err != nil {
					return err
				}
				if p.ID == "" || p.Zone() != "zone-1" || p.Metadata["anthill-node"] != "node-4" || !p.Online || p.PID != 0 {
					t.Errorf("added peer %+v", p)
				}
				if len(p.PeerAddresses) == 0 || !strings.HasPrefix(p.PeerAddresses[0], "gd2-4") {
					t.Errorf("address used for add should come first: %v", p.PeerAddresses)
				}
				return nil
			},
			op: gd2.OpPeersAdd, status: 201,
		},
		{
			name: "adding a peer without zone defaults its zone to its own id",
			call: func(t *testing.T, e *env) error {
				p, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-4:24008"}})
				if err == nil && p.Zone() != p.ID {
					t.Errorf("zone %q, want the peer id %q", p.Zone(), p.ID)
				}
				return err
			},
			op: gd2.OpPeersAdd, status: 201,
		},
		{
			name: "adding a peer without addresses is 400",
			call: func(t *testing.T, e *env) error { _, err := e.c.AddPeer(bg, gd2.PeerAddRequest{}); return err },
			op:   gd2.OpPeersAdd, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "adding a peer with a reserved underscore metadata key is 400",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-4"}, Metadata: map[string]string{"_x": "y"}})
				return err
			},
			op: gd2.OpPeersAdd, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "adding a peer with more than 4 KiB of metadata is 400",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-4"}, Metadata: map[string]string{"k": strings.Repeat("v", 4096)}})
				return err
			},
			op: gd2.OpPeersAdd, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "adding an address that is already a member is a 409 that already exists",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{e.peers[2].PeerAddresses[0]}})
				return err
			},
			op: gd2.OpPeersAdd, status: 409, want: gd2.ErrAlreadyExists,
		},
		{
			name: "adding a host that does not answer is 500",
			setup: func(t *testing.T, e *env) {
				e.must(e.sim.UpsertHost(sim.HostSpec{Name: "gd2-9", Alive: false}), "upsert host")
			},
			call: func(t *testing.T, e *env) error {
				_, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-9"}})
				var apiErr *gd2.APIError
				if errors.As(err, &apiErr) && !strings.Contains(apiErr.Error(), "could not connect") {
					t.Errorf("message %q", apiErr.Error())
				}
				return err
			},
			op: gd2.OpPeersAdd, status: 500, want: errPlain,
		},
		{
			name: "editing a peer answers 200 with merged metadata, the new zone and online false",
			call: func(t *testing.T, e *env) error {
				id := e.peers[0].ID
				if _, err := e.c.EditPeer(bg, id, gd2.PeerEditRequest{Metadata: map[string]string{"a": "1"}}); err != nil {
					return err
				}
				p, err := e.c.EditPeer(bg, id, gd2.PeerEditRequest{Zone: "zone-9", Metadata: map[string]string{"b": "2", "a": ""}})
				if err != nil {
					return err
				}
				if p.Online || p.PID != 0 {
					t.Errorf("edit answer should say online false without pid: %+v", p)
				}
				if v, ok := p.Metadata["a"]; !ok || v != "" || p.Metadata["b"] != "2" || p.Zone() != "zone-9" {
					t.Errorf("metadata %v", p.Metadata)
				}
				live, err := e.c.GetPeer(bg, id)
				if err == nil && !live.Online {
					t.Error("a following GET should show the peer online")
				}
				return err
			},
			op: gd2.OpPeersEdit, status: 200,
		},
		{
			name: "editing a peer by a malformed id is 400",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditPeer(bg, "zzz", gd2.PeerEditRequest{Zone: "z"})
				return err
			},
			op: gd2.OpPeersEdit, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "editing a peer with a reserved underscore key is 400",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditPeer(bg, e.peers[0].ID, gd2.PeerEditRequest{Metadata: map[string]string{"_zone": "x"}})
				return err
			},
			op: gd2.OpPeersEdit, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "editing an unknown peer is 500, not 404",
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditPeer(bg, "5d8f2c1e-0000-4000-8000-000000000001", gd2.PeerEditRequest{Zone: "z"})
				return err
			},
			op: gd2.OpPeersEdit, status: 500, want: errPlain,
		},
		{
			name: "editing a peer whose metadata would pass 4 KiB after merging is 500",
			setup: func(t *testing.T, e *env) {
				_, err := e.c.EditPeer(bg, e.peers[0].ID, gd2.PeerEditRequest{Metadata: map[string]string{"a": strings.Repeat("x", 3000)}})
				e.must(err, "first edit")
			},
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditPeer(bg, e.peers[0].ID, gd2.PeerEditRequest{Metadata: map[string]string{"b": strings.Repeat("y", 3000)}})
				return err
			},
			// sheet: request over 4 KiB is 400 (edit checks request and merged
			// map); the overflow of the merged map is the 500 "Transaction to
			// update peer failed".
			op: gd2.OpPeersEdit, status: 500, want: errPlain,
		},
		{
			name:  "editing a peer while another transaction holds its lock is 409",
			setup: func(t *testing.T, e *env) { e.sim.HoldLock(e.peers[0].ID, true) },
			call: func(t *testing.T, e *env) error {
				_, err := e.c.EditPeer(bg, e.peers[0].ID, gd2.PeerEditRequest{Zone: "z"})
				return err
			},
			op: gd2.OpPeersEdit, status: 409, want: gd2.ErrLockBusy,
		},
		{
			name: "deleting a peer without bricks answers 204 and the peer is gone",
			call: func(t *testing.T, e *env) error {
				if err := e.nodeClient(e.peers[0].Name).DeletePeer(bg, e.peers[2].ID); err != nil {
					return err
				}
				if _, err := e.c.GetPeer(bg, e.peers[2].ID); !errors.Is(err, gd2.ErrNotFound) {
					t.Errorf("deleted peer still readable: %v", err)
				}
				return nil
			},
			op: gd2.OpPeersDelete, status: 204,
		},
		{
			name: "deleting a peer by a malformed id is 400",
			call: func(t *testing.T, e *env) error { return e.c.DeletePeer(bg, "nope") },
			op:   gd2.OpPeersDelete, status: 400, want: gd2.ErrBadRequest,
		},
		{
			name: "deleting an unknown peer is 404",
			call: func(t *testing.T, e *env) error { return e.c.DeletePeer(bg, "5d8f2c1e-0000-4000-8000-000000000001") },
			op:   gd2.OpPeersDelete, status: 404, want: gd2.ErrNotFound,
		},
		{
			name: "deleting the peer that serves the request is 400",
			call: func(t *testing.T, e *env) error { return e.nodeClient(e.peers[0].Name).DeletePeer(bg, e.peers[0].ID) },
			op:   gd2.OpPeersDelete, status: 400, want: gd2.ErrRemovingSelf,
		},
		{
			name:  "deleting a dead peer is 500 peer is not alive",
			setup: func(t *testing.T, e *env) { e.must(e.sim.SetPeerAlive(e.peers[2].ID, false), "down") },
			call:  func(t *testing.T, e *env) error { return e.c.DeletePeer(bg, e.peers[2].ID) },
			op:    gd2.OpPeersDelete, status: 500, want: gd2.ErrPeerNotAlive,
		},
		{
			name:  "deleting a peer that holds bricks is 403",
			setup: func(t *testing.T, e *env) { e.manualReplica3("vol1") },
			call:  func(t *testing.T, e *env) error { return e.nodeClient(e.peers[0].Name).DeletePeer(bg, e.peers[2].ID) },
			op:    gd2.OpPeersDelete, status: 403, want: gd2.ErrPeerHasBricks,
		},
		{
			name: "deleting a dead peer that holds bricks reports the dead peer first",
			setup: func(t *testing.T, e *env) {
				e.manualReplica3("vol1")
				e.must(e.sim.SetPeerAlive(e.peers[2].ID, false), "down")
			},
			call: func(t *testing.T, e *env) error { return e.c.DeletePeer(bg, e.peers[2].ID) },
			op:   gd2.OpPeersDelete, status: 500, want: gd2.ErrPeerNotAlive,
		},
	})
}
