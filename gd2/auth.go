package gd2

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// tokenLifetime matches GD2's own client. GD2 checks exp with no leeway, so
// a token is minted per request rather than cached.
const tokenLifetime = 120 * time.Second

// token returns a JWT for one request. GD2 keys HMAC with the ASCII bytes of
// the hex secret (not the decoded bytes) and binds the token to the request
// through qsh, so a token for GET /v1/peers cannot be replayed as a DELETE.
func (c *Client) token(method, path string) (string, error) {
	claims := jwt.MapClaims{
		"iss": c.user,
		"exp": c.now().Add(tokenLifetime).Unix(),
		"qsh": QSH(method, path),
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(c.secret))
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return tok, nil
}

// QSH is the query-string hash claim GD2 expects: lowercase hex SHA-256 of
// "METHOD&PATH", where PATH includes /v1 and excludes scheme, host and query.
func QSH(method, path string) string {
	sum := sha256.Sum256([]byte(method + "&" + path))
	return hex.EncodeToString(sum[:])
}
