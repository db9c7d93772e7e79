package gd2

import (
	"context"
	"net/http"
	"net/url"
)

// ZoneKey is the peer metadata key GD2 stores the zone under. Its default
// is the peer's own UUID, set when the peer first starts.
const ZoneKey = "_zone"

// Peer is a GD2 cluster member.
type Peer struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	PeerAddresses   []string `json:"peer-addresses"`   // host:24008 (GD2 to GD2)
	ClientAddresses []string `json:"client-addresses"` // ip:24007 (REST and clients)
	// Online reflects GD2's liveness key (30 s TTL). Add answers always say
	// true and edit answers always say false; GET for the live value.
	Online   bool              `json:"online"`
	PID      int               `json:"pid,omitempty"` // absent when offline
	Metadata map[string]string `json:"metadata"`
}

// Zone returns the peer's zone (metadata _zone).
func (p Peer) Zone() string { return p.Metadata[ZoneKey] }

// PeerAddRequest adds a node to the cluster. Only Addresses[0] is used;
// without a port GD2 dials :24008.
type PeerAddRequest struct {
	Addresses []string          `json:"addresses"`
	Zone      string            `json:"zone,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// PeerEditRequest merges metadata into a peer (keys cannot be deleted) and
// sets the zone when non-empty.
type PeerEditRequest struct {
	Zone     string            `json:"zone,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Filter selects peers or volumes by metadata. Key alone: the key exists.
// Value alone: any key has the value (GD2 repeats an item once per matching
// key). Both: the key has exactly the value. Zero Filter lists everything.
type Filter struct {
	Key   string
	Value string
}

func (f Filter) query() url.Values {
	q := url.Values{}
	if f.Key != "" {
		q.Set("key", f.Key)
	}
	if f.Value != "" {
		q.Set("value", f.Value)
	}
	return q
}

// ListPeers lists peers in UUID order. A filtered list may be nil.
func (c *Client) ListPeers(ctx context.Context, f Filter) ([]Peer, error) {
	var out []Peer
	err := c.do(ctx, request{op: OpPeersList, method: http.MethodGet, path: "/v1/peers",
		query: f.query(), out: &out, allowEmpty: true})
	return out, err
}

// GetPeer returns one peer; ErrNotFound if unknown.
func (c *Client) GetPeer(ctx context.Context, id string) (*Peer, error) {
	var out Peer
	p, perr := apiPath("peers", id)
	if err := c.do(ctx, request{op: OpPeersGet, method: http.MethodGet, path: p, pathErr: perr, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// AddPeer joins a node. The answer carries the peer's new UUID: a joining
// node is re-identified, so record this ID, not the one the node had before.
// Adds through one client (one per cluster) go one at a time: real GD2,
// given two at once, answered the second 500 "new peer was added, but could
// not find peer in store", and that peer stayed half joined ("peer is part
// of another cluster" on every retry).
func (c *Client) AddPeer(ctx context.Context, req PeerAddRequest) (*Peer, error) {
	c.peerAdds.Lock()
	defer c.peerAdds.Unlock()
	var out Peer
	if err := c.do(ctx, request{op: OpPeersAdd, method: http.MethodPost, path: "/v1/peers", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// EditPeer merges metadata and/or sets the zone. GD2 answers 500 (not 404)
// for an unknown peer.
func (c *Client) EditPeer(ctx context.Context, id string, req PeerEditRequest) (*Peer, error) {
	var out Peer
	p, perr := apiPath("peers", id)
	if err := c.do(ctx, request{op: OpPeersEdit, method: http.MethodPost, path: p, pathErr: perr, body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePeer removes a peer. GD2 refuses a dead peer (ErrPeerNotAlive), a
// peer with bricks (ErrPeerHasBricks) and the serving node (ErrRemovingSelf).
func (c *Client) DeletePeer(ctx context.Context, id string) error {
	p, perr := apiPath("peers", id)
	return c.do(ctx, request{op: OpPeersDelete, method: http.MethodDelete, path: p, pathErr: perr})
}
