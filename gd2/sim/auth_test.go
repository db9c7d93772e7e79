package sim

import (
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func sign(t *testing.T, m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAuthRejectsAndAccepts(t *testing.T) {
	h := newHarness(t, Config{Peers: 1})
	now := h.clock.Now()
	good := func(method, path string) jwt.MapClaims {
		return jwt.MapClaims{"iss": "glustercli", "exp": now.Add(time.Minute).Unix(), "qsh": QSH(method, path)}
	}
	key := []byte(testSecret)
	with := func(c jwt.MapClaims, mut func(jwt.MapClaims)) jwt.MapClaims { mut(c); return c }
	cases := []struct {
		name   string
		path   string
		header string
		status int
		msg    string
	}{
		{"no header", "/v1/peers", "", 401, "'Authorization' header is required"},
		{"wrong scheme", "/v1/peers", "Basic abc", 401, "'Authorization' header must be of the format - Bearer <TOKEN>"},
		{"three parts", "/v1/peers", "Bearer a b", 401, "'Authorization' header must be of the format - Bearer <TOKEN>"},
		{"valid lowercase scheme", "/v1/peers", "bearer " + sign(t, jwt.SigningMethodHS256, key, good("GET", "/v1/peers")), 200, ""},
		{"HS512 accepted", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS512, key, good("GET", "/v1/peers")), 200, ""},
		{"query excluded from qsh", "/v1/peers?key=a", "Bearer " + sign(t, jwt.SigningMethodHS256, key, good("GET", "/v1/peers")), 200, ""},
		{"expired", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS256, key, with(good("GET", "/v1/peers"), func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Second).Unix() })), 401, "Token is expired"},
		{"exp equal to now is valid", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS256, key, with(good("GET", "/v1/peers"), func(c jwt.MapClaims) { c["exp"] = now.Unix() })), 200, ""},
		{"wrong key", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS256, []byte("nope"), good("GET", "/v1/peers")), 401, "signature is invalid"},
		{"wrong qsh", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS256, key, good("GET", "/v1/volumes")), 401, "invalid qsh claim in token"},
		{"missing qsh", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS256, key, with(good("GET", "/v1/peers"), func(c jwt.MapClaims) { delete(c, "qsh") })), 401, "token missing qsh Claim"},
		{"missing iss", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS256, key, with(good("GET", "/v1/peers"), func(c jwt.MapClaims) { delete(c, "iss") })), 401, "token missing iss Claim"},
		{"other issuer", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodHS256, key, with(good("GET", "/v1/peers"), func(c jwt.MapClaims) { c["iss"] = "bob" })), 401, "invalid App ID: bob"},
		{"none alg", "/v1/peers", "Bearer " + sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, good("GET", "/v1/peers")), 401, "unexpected signing method: none"},
		{"ping open", "/ping", "", 200, ""},
		{"endpoints open", "/endpoints", "", 200, ""},
		{"ping with query needs auth", "/ping?x=1", "", 401, "'Authorization' header is required"},
		{"version needs auth", "/version", "", 401, "'Authorization' header is required"},
		{"unknown path without token is 401", "/v1/nope", "", 401, "'Authorization' header is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", h.srv.URL+tc.path, nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			r := h.send(req)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.msg != "" && r.errMsg(t) != tc.msg {
				t.Errorf("message %q, want %q", r.errMsg(t), tc.msg)
			}
			if r.header.Get("X-Request-Id") == "" || r.header.Get("X-Gluster-Cluster-Id") == "" {
				t.Errorf("missing common headers: %v", r.header)
			}
		})
	}
}

func TestAuthTokenExpiresWithClock(t *testing.T) {
	h := newHarness(t, Config{Peers: 1})
	tok, err := Token(testSecret, "GET", "/v1/peers", h.clock.Now(), 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	get := func() int {
		req, _ := http.NewRequest("GET", h.srv.URL+"/v1/peers", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return h.send(req).status
	}
	h.clock.Step(120 * time.Second)
	if s := get(); s != 200 {
		t.Fatalf("at exp: %d", s)
	}
	h.clock.Step(time.Second)
	if s := get(); s != 401 {
		t.Fatalf("after exp: %d", s)
	}
}

func TestAuthOffAndUnknownPath(t *testing.T) {
	h := newHarness(t, Config{Peers: 1, Secret: "-"})
	r := h.do("GET", "/v1/nope", nil)
	if r.status != 404 || r.header.Get("Content-Type") == "application/json; charset=UTF-8" {
		t.Errorf("unknown path: %d %q", r.status, r.header.Get("Content-Type"))
	}
	r = h.must(200, "GET", "/ping", nil)
	if len(r.body) != 0 || r.header.Get("Content-Type") != "" {
		t.Errorf("ping body %q", r.body)
	}
	var ver wireVersion
	h.must(200, "GET", "/version", nil).decode(t, &ver)
	if ver.APIVersion != 1 {
		t.Errorf("version %+v", ver)
	}
}
