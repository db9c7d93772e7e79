package gd2

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// decodeBody unmarshals a 2xx body into out. GD2 sends no body at all for
// 204s and for the nil-body 200s (ping, heal, device edit); an empty body is
// an error only when the caller needs a value.
func decodeBody(data []byte, out any, allowEmpty bool) error {
	if out == nil {
		return nil
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		if allowEmpty {
			return nil
		}
		return errors.New("empty body")
	}
	return json.Unmarshal(data, out)
}

// decodeError turns a non-2xx answer into an *APIError. Bodies that are not
// a GD2 error envelope (the router's plain-text 404, a proxy's HTML page) still
// give a typed error, with the start of the text kept in Body.
func decodeError(op Operation, method, path string, status int, data []byte) *APIError {
	e := &APIError{Status: status, Op: op, Method: method, Path: path}
	var env struct {
		Errors []ErrorItem `json:"errors"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &env); err == nil && len(env.Errors) > 0 {
		e.Errors = env.Errors
		return e
	}
	e.Body = excerpt(data)
	return e
}

// excerpt returns printable, valid UTF-8 text of at most maxErrorBodyText
// bytes, so a raw body can go into an error message safely.
func excerpt(data []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(data), "?"))
	if len(s) > maxErrorBodyText {
		cut := maxErrorBodyText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' {
			return ' '
		}
		return r
	}, s)
}
