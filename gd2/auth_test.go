package gd2

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestTokenClaimsMatchWhatGD2Checks(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	cases := []struct {
		name     string
		call     func(*Client) error
		wantPath string // what qsh must cover
		wantMeth string
	}{
		{
			name:     "a plain list signs the path",
			call:     func(c *Client) error { _, err := c.ListVolumes(context.Background(), Filter{}); return err },
			wantMeth: http.MethodGet, wantPath: "/v1/volumes",
		},
		{
			name: "a filtered peer list signs the path without the query",
			call: func(c *Client) error {
				_, err := c.ListPeers(context.Background(), Filter{Key: "anthill-state", Value: "Online"})
				return err
			},
			wantMeth: http.MethodGet, wantPath: "/v1/peers",
		},
		{
			name:     "a heal trigger with a type signs the path without the query",
			call:     func(c *Client) error { return c.Heal(context.Background(), "vol1", HealFull) },
			wantMeth: http.MethodPost, wantPath: "/v1/volumes/vol1/heal",
		},
		{
			name: "a device read signs the device path without its leading slash doubled",
			call: func(c *Client) error {
				_, err := c.GetDevice(context.Background(), "8e1a3c6a-1111-4222-8333-944445555666", "/dev/sdb")
				return err
			},
			wantMeth: http.MethodGet, wantPath: "/v1/devices/8e1a3c6a-1111-4222-8333-944445555666/dev/sdb",
		},
		{
			name: "a device state edit signs POST over the device path",
			call: func(c *Client) error {
				return c.EditDevice(context.Background(), "8e1a3c6a-1111-4222-8333-944445555666", "/dev/sdc", DeviceDisabled)
			},
			wantMeth: http.MethodPost, wantPath: "/v1/devices/8e1a3c6a-1111-4222-8333-944445555666/dev/sdc",
		},
		{
			name:     "version needs auth although it is unversioned",
			call:     func(c *Client) error { _, err := c.Version(context.Background()); return err },
			wantMeth: http.MethodGet, wantPath: "/version",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `[{"device":"/dev/sdb"}]`
			if tc.wantPath == "/version" {
				body = `{"glusterd-version":"","api-version":1}`
			}
			rec := newRecorder(t, jsonAnswer(http.StatusOK, body))
			c := rec.client(t, func(o *Options) { o.Secret = testSecret; o.Now = func() time.Time { return now } })
			_ = tc.call(c) // bodies may not fit every call; only the request matters
			got := rec.seen()
			if len(got) != 1 {
				t.Fatalf("want 1 request, got %d", len(got))
			}
			if got[0].Path != tc.wantPath || got[0].Method != tc.wantMeth {
				t.Fatalf("request %s %s, want %s %s", got[0].Method, got[0].Path, tc.wantMeth, tc.wantPath)
			}
			parts := strings.Split(got[0].Auth, " ")
			if len(parts) != 2 || parts[0] != "bearer" {
				t.Fatalf("Authorization %q is not 'bearer <jwt>'", got[0].Auth)
			}
			claims := jwt.MapClaims{}
			tok, err := jwt.ParseWithClaims(parts[1], claims, func(tok *jwt.Token) (any, error) {
				return []byte(testSecret), nil // ASCII bytes of the hex string
			}, jwt.WithValidMethods([]string{"HS256"}))
			if err != nil || !tok.Valid {
				t.Fatalf("token does not verify with the secret's ASCII bytes: %v", err)
			}
			if tok.Header["typ"] != "JWT" {
				t.Errorf("typ header %v", tok.Header["typ"])
			}
			if claims["iss"] != DefaultUser {
				t.Errorf("iss = %v, want %s", claims["iss"], DefaultUser)
			}
			if exp, _ := claims["exp"].(float64); int64(exp) != now.Add(120*time.Second).Unix() {
				t.Errorf("exp = %v, want now+120s", claims["exp"])
			}
			if claims["qsh"] != QSH(tc.wantMeth, tc.wantPath) {
				t.Errorf("qsh = %v, want sha256(%s&%s)", claims["qsh"], tc.wantMeth, tc.wantPath)
			}
			for _, k := range []string{"iat", "nbf"} {
				if _, ok := claims[k]; ok {
					t.Errorf("unexpected claim %s: GD2 would check it with no leeway", k)
				}
			}
		})
	}
}

func TestQSHIsLowercaseHexOfMethodAmpersandPath(t *testing.T) {
	// sha256 of "GET&/v1/peers", computed with sha256sum.
	const want = "36cbea2b6ef321559845e7d1cce23c62dffa0a973b05b09fcb43f6b0805ef8e7"
	if got := QSH("GET", "/v1/peers"); got != want {
		t.Fatalf("qsh = %q, want %q", got, want)
	}
	if QSH("GET", "/v1/peers") == QSH("DELETE", "/v1/peers") {
		t.Fatal("qsh must bind the method")
	}
}

func TestEveryRequestGetsAFreshToken(t *testing.T) {
	rec := newRecorder(t, jsonAnswer(http.StatusOK, `[]`))
	var tick int64
	c := rec.client(t, func(o *Options) {
		o.Secret = testSecret
		o.Now = func() time.Time { tick++; return time.Unix(1_900_000_000+tick, 0) }
	})
	for range 2 {
		if _, err := c.ListVolumes(context.Background(), Filter{}); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.seen()
	if got[0].Auth == got[1].Auth {
		t.Fatal("two requests carried the same token")
	}
}

func TestNoAuthorizationHeaderWithoutSecretOrOnExemptPaths(t *testing.T) {
	rec := newRecorder(t, jsonAnswer(http.StatusOK, `[]`))
	open := rec.client(t)
	if _, err := open.ListPeers(context.Background(), Filter{}); err != nil {
		t.Fatal(err)
	}
	secured := rec.client(t, func(o *Options) { o.Secret = testSecret; o.User = "someone" })
	if err := secured.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := secured.Endpoints(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.seen() {
		if r.Auth != "" {
			t.Errorf("%s %s carried Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
}
