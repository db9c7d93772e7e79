package framework

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// EtcdGet returns the value etcd holds under key (such as
// /registry/operator.gluster.org/glusterclusters/NS/NAME), or nil when
// there is none. It talks to etcd's JSON gateway of the v3 API over plain
// http, so no etcd client library enters the module: the tests read what
// the API server stored, bypassing the API server.
func (cp *ControlPlane) EtcdGet(ctx context.Context, key string) ([]byte, error) {
	body, err := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cp.EtcdURL+"/v3/kv/range", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("etcd range %s: %w", key, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("etcd range %s: %s: %s", key, resp.Status, raw)
	}
	var out struct {
		KVs []struct {
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("etcd range %s: %w", key, err)
	}
	if len(out.KVs) == 0 {
		return nil, nil
	}
	return base64.StdEncoding.DecodeString(out.KVs[0].Value)
}
