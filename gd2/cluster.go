package gd2

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
)

// VersionInfo is GET /version.
type VersionInfo struct {
	GlusterdVersion string `json:"glusterd-version"` // may be empty
	APIVersion      int    `json:"api-version"`
}

// Endpoint describes one GD2 route as GET /endpoints lists it (path without
// the /v1 prefix).
type Endpoint struct {
	Name         string     `json:"name"`
	Description  string     `json:"description,omitempty"`
	Methods      StringList `json:"methods"`
	Path         string     `json:"path"`
	RequestType  string     `json:"request-type,omitempty"`
	ResponseType string     `json:"response-type,omitempty"`
}

// StringList decodes either a JSON string or an array of strings: GD2
// versions differ in how they send endpoint methods.
type StringList []string

// UnmarshalJSON accepts "GET" as well as ["GET","POST"].
func (s *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// ClusterOption is one cluster-wide option.
type ClusterOption struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	Default  string `json:"default"`
	Modified bool   `json:"modified"`
}

// Ping checks that GD2 answers at all. It sends no token: GD2 exempts
// /ping from auth, so this works even with a wrong secret.
func (c *Client) Ping(ctx context.Context) error {
	return c.do(ctx, request{op: OpPing, method: http.MethodGet, path: "/ping", noAuth: true})
}

// Version returns GD2's version; it needs auth, so it doubles as a check of
// the secret.
func (c *Client) Version(ctx context.Context) (*VersionInfo, error) {
	var out VersionInfo
	if err := c.do(ctx, request{op: OpVersion, method: http.MethodGet, path: "/version", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Endpoints lists the routes GD2 serves (no auth needed).
func (c *Client) Endpoints(ctx context.Context) ([]Endpoint, error) {
	var out []Endpoint
	err := c.do(ctx, request{op: OpEndpoints, method: http.MethodGet, path: "/endpoints", noAuth: true, out: &out, allowEmpty: true})
	return out, err
}

// ClusterOptions lists all cluster options with values and defaults, in no
// particular order.
func (c *Client) ClusterOptions(ctx context.Context) ([]ClusterOption, error) {
	var out []ClusterOption
	err := c.do(ctx, request{op: OpClusterOptionsGet, method: http.MethodGet, path: "/v1/cluster/options", out: &out, allowEmpty: true})
	return out, err
}

// SetClusterOptions sets cluster options and returns every option that is
// now explicitly set. An unknown key is 500 and matches ErrInvalidOption.
func (c *Client) SetClusterOptions(ctx context.Context, opts map[string]string) (map[string]string, error) {
	body := struct {
		Options map[string]string `json:"options"`
	}{opts}
	var out map[string]string
	err := c.do(ctx, request{op: OpClusterOptionsSet, method: http.MethodPost, path: "/v1/cluster/options", body: body, out: &out, allowEmpty: true})
	return out, err
}
