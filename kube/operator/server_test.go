package operator

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/gluster/anthill/kube/engine"
)

// TestServerServesProfilesOnlyWhenAsked: /debug/pprof/ is there with
// profiling on and absent without it; /metrics is there either way.
func TestServerServesProfilesOnlyWhenAsked(t *testing.T) {
	for _, profiling := range []bool{false, true} {
		srv, err := NewServer("127.0.0.1:0", engine.NewMetrics(), zap.NewNop(), profiling)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		base := "http://" + srv.Addr()
		if code, _ := get(t, base+"/metrics"); code != http.StatusOK {
			t.Errorf("profiling %v: /metrics answered %d", profiling, code)
		}
		code, body := get(t, base+"/debug/pprof/heap?debug=1")
		switch {
		case profiling && (code != http.StatusOK || !strings.Contains(body, "heap profile")):
			t.Errorf("profiling on: /debug/pprof/heap answered %d: %.80q", code, body)
		case !profiling && code != http.StatusNotFound:
			t.Errorf("profiling off: /debug/pprof/heap answered %d, want 404", code)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
