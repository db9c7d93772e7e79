package gd2

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fastRetry keeps retry tests quick while still exercising backoff.
var fastRetry = &RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond}

// recorded is what a test server saw of one request.
type recorded struct {
	Method, Path, RawQuery, Auth, ContentType string
	Body                                      string
}

// recorder is an httptest server that records requests and answers with a
// scripted sequence of responses (the last one repeats).
type recorder struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	requests  []recorded
	responses []scripted
}

type scripted struct {
	status int
	body   string
	ctype  string
}

func jsonAnswer(status int, body string) scripted {
	return scripted{status: status, body: body, ctype: "application/json; charset=UTF-8"}
}

func newRecorder(t *testing.T, responses ...scripted) *recorder {
	t.Helper()
	r := &recorder{t: t, responses: responses}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	buf := make([]byte, 1<<16)
	n, _ := req.Body.Read(buf)
	r.mu.Lock()
	r.requests = append(r.requests, recorded{
		Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery,
		Auth: req.Header.Get("Authorization"), ContentType: req.Header.Get("Content-Type"),
		Body: string(buf[:n]),
	})
	i := len(r.requests) - 1
	resp := scripted{status: http.StatusOK}
	if len(r.responses) > 0 {
		resp = r.responses[min(i, len(r.responses)-1)]
	}
	r.mu.Unlock()
	if resp.ctype != "" {
		w.Header().Set("Content-Type", resp.ctype)
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write([]byte(resp.body))
}

func (r *recorder) seen() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.requests...)
}

func (r *recorder) client(t *testing.T, mutate ...func(*Options)) *Client {
	t.Helper()
	opts := Options{Endpoint: r.srv.URL, Retry: fastRetry}
	for _, m := range mutate {
		m(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}
