package gd2

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeError: any body with any status must give a usable *APIError
// whose text is valid UTF-8 and bounded, whatever GD2 or a proxy sent.
func FuzzDecodeError(f *testing.F) {
	f.Add(404, []byte("404 page not found\n"))
	f.Add(409, []byte(lockBody))
	f.Add(500, []byte(`{"errors":[{"code":2,"message":"a txn step failed","fields":{"peer-id":"p","step":"s","error":"e"}}]}`))
	f.Add(400, []byte(`{"errors":null}`))
	f.Add(502, []byte("<html>\x00\xff</html>"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := decodeError(OpVolumesGet, http.MethodGet, "/v1/volumes/v", status, body)
		if e == nil || e.Status != status {
			t.Fatal("lost the status")
		}
		if len(e.Errors) == 0 && len(e.Body) > maxErrorBodyText+3 {
			t.Fatalf("raw body excerpt of %d bytes", len(e.Body))
		}
		if !utf8.ValidString(e.Body) {
			t.Fatal("excerpt is not valid UTF-8")
		}
		_ = e.Error()
		for _, s := range allSentinels {
			_ = errors.Is(e, s)
		}
		_ = e.TxnStepFailures()
	})
}

// FuzzDecodeVolume: decoding never panics and a decoded volume re-encodes
// to something that decodes to the same value.
func FuzzDecodeVolume(f *testing.F) {
	f.Add([]byte(`{"id":"v1","name":"vol1","type":"Replicate","replica-count":3,"state":"Started","subvols":[{"name":"vol1-replicate-0","type":"Replicate","bricks":[{"peer-id":"p1","host":"h1","path":"/b"}]}],"capacity":1073741824}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, body []byte) {
		var v Volume
		if err := decodeBody(body, &v, false); err != nil {
			return
		}
		_ = v.Bricks()
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var w Volume
		if err := json.Unmarshal(again, &w); err != nil {
			t.Fatalf("decode of re-encoded volume: %v", err)
		}
	})
}

// FuzzDecodeHealInfo: heal counters keep absent apart from zero and -1.
func FuzzDecodeHealInfo(f *testing.F) {
	f.Add([]byte(`[{"host-id":"p1","name":"h1:/b","status":"Connected","entries":0}]`))
	f.Add([]byte(`[{"host-id":"-","name":"h1:/b","status":"Transport endpoint is not connected","entries":-1}]`))
	f.Add([]byte(`[{"host-id":"p1","name":"h:/b","status":"Connected","total-entries":5,"entries-in-heal-pending":4,"entries-in-split-brain":0,"entries-possibly-healing":1,"file-gfid":[{"Filename":"/a","GfID":"g"}]}]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var out []BrickHealInfo
		if err := decodeBody(body, &out, true); err != nil {
			return
		}
		for _, b := range out {
			if b.Entries != nil && *b.Entries < 0 && !b.BrickDown() {
				t.Fatal("negative counter not reported as brick down")
			}
		}
	})
}

// FuzzDecodeStringList: endpoint methods come as a string or a list.
func FuzzDecodeStringList(f *testing.F) {
	f.Add([]byte(`"GET"`))
	f.Add([]byte(`["GET","POST"]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var s StringList
		_ = json.Unmarshal(body, &s)
	})
}
