package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Authentication follows GD2's middleware: bearer JWT, any HMAC algorithm,
// key = the ASCII bytes of the hex secret, issuer "glustercli", exp checked
// without leeway, qsh = sha256 hex of "METHOD&PATH" (no query).

const authIssuer = "glustercli"

// authExempt are compared with the full request URI, so "/ping?x" needs a
// token, as in GD2.
var authExempt = map[string]bool{"/ping": true, "/endpoints": true}

// keyfuncError carries GD2's message for failures found while choosing the
// key, so it survives the JWT library's wrapping.
type keyfuncError struct{ msg string }

func (e *keyfuncError) Error() string { return e.msg }

func (s *Simulator) authenticate(r *http.Request) error {
	if s.cfg.Secret == "" || authExempt[r.RequestURI] {
		return nil
	}
	unauthorized := func(msg string) error { return errf(http.StatusUnauthorized, "%s", msg) }
	hdr := r.Header.Get("Authorization")
	if hdr == "" {
		return unauthorized("'Authorization' header is required")
	}
	parts := strings.Split(hdr, " ")
	if len(parts) != 2 || !strings.EqualFold(parts[0], "bearer") {
		return unauthorized("'Authorization' header must be of the format - Bearer <TOKEN>")
	}
	parser := jwt.NewParser(jwt.WithoutClaimsValidation())
	tok, err := parser.Parse(parts[1], func(t *jwt.Token) (any, error) {
		if _, ok := t.Method.(*jwt.SigningMethodHMAC); !ok {
			return nil, &keyfuncError{fmt.Sprintf("unexpected signing method: %v", t.Header["alg"])}
		}
		claims := t.Claims.(jwt.MapClaims)
		iss, ok := claims["iss"]
		if !ok {
			return nil, &keyfuncError{"token missing iss Claim"}
		}
		if iss != authIssuer {
			return nil, &keyfuncError{fmt.Sprintf("invalid App ID: %v", iss)}
		}
		for _, c := range []string{"exp", "qsh"} {
			if _, ok := claims[c]; !ok {
				return nil, &keyfuncError{fmt.Sprintf("token missing %s Claim", c)}
			}
		}
		return []byte(s.cfg.Secret), nil
	})
	if err != nil {
		var kf *keyfuncError
		switch {
		case errors.As(err, &kf):
			return unauthorized(kf.msg)
		case errors.Is(err, jwt.ErrTokenSignatureInvalid):
			return unauthorized("signature is invalid")
		case errors.Is(err, jwt.ErrTokenMalformed):
			return unauthorized("token contains an invalid number of segments")
		default:
			return unauthorized(err.Error())
		}
	}
	claims := tok.Claims.(jwt.MapClaims)
	if msg := checkTimes(claims, s.clock.Now()); msg != "" {
		return unauthorized(msg)
	}
	if claims["qsh"] != QSH(r.Method, r.URL.Path) {
		return unauthorized("invalid qsh claim in token")
	}
	return nil
}

// checkTimes applies jwt-go v3's time rules with no leeway: valid while
// now <= exp, now >= iat and now >= nbf, in whole seconds.
func checkTimes(claims jwt.MapClaims, now time.Time) string {
	n := now.Unix()
	num := func(k string) (int64, bool) {
		switch v := claims[k].(type) {
		case float64:
			return int64(v), true
		case nil:
			return 0, false
		default:
			return 0, true
		}
	}
	if exp, ok := num("exp"); !ok || n > exp {
		return "Token is expired"
	}
	if iat, ok := num("iat"); ok && n < iat {
		return "Token used before issued"
	}
	if nbf, ok := num("nbf"); ok && n < nbf {
		return "Token is not valid yet"
	}
	return ""
}

// QSH is GD2's query-string hash claim for a request: lowercase hex SHA-256
// of METHOD + "&" + path (with /v1, without query).
func QSH(method, path string) string {
	sum := sha256.Sum256([]byte(method + "&" + path))
	return hex.EncodeToString(sum[:])
}

// Token mints a bearer token like GD2's own client: HS256, iss glustercli,
// exp = now + ttl, qsh over method and path.
func Token(secret, method, path string, now time.Time, ttl time.Duration) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": authIssuer,
		"exp": now.Add(ttl).Unix(),
		"qsh": QSH(method, path),
	})
	return t.SignedString([]byte(secret))
}
