package sim

import (
	"net/http"
	"strings"
)

func ping(*call) (int, any, error) { return http.StatusOK, nil, nil }

func version(c *call) (int, any, error) {
	// GD2 reports the version its own binary was built with
	// (glusterd2@54ce5f6f: commands/version, version.GlusterdVersion set
	// by scripts/build.sh), so each host answers with its build.
	v := c.s.cfg.Version
	if h := c.m.Hosts[routingOf(c.r).host]; h != nil && h.Version != "" {
		v = h.Version
	}
	return http.StatusOK, wireVersion{GlusterdVersion: v, APIVersion: 1}, nil
}

// endpoints lists the GD2 routes with paths relative to /v1.
func endpoints(c *call) (int, any, error) {
	out := []wireEndpoint{}
	for _, rt := range c.s.routes() {
		out = append(out, wireEndpoint{
			Name: rt.name, Description: rt.desc, Methods: rt.method,
			Path: strings.TrimPrefix(rt.pattern, "/v1"),
		})
	}
	return http.StatusOK, out, nil
}

// volumeSubGet dispatches GET /v1/volumes/{v}/{a}/{rest...}: option get
// when a is "options" (registered first in GD2; option names may contain
// slashes, "cluster/replicate.self-heal-daemon"), else heal-info with
// options a.
func volumeSubGet(c *call) (int, any, error) {
	a, b := c.pv("a"), c.pv("rest")
	if a == "options" {
		v, err := c.volumeArg()
		if err != nil {
			return 0, nil, err
		}
		return volumeOptionGet(c, v, b)
	}
	if b == "heal-info" {
		return c.healInfo(a)
	}
	return 0, nil, errf(http.StatusNotFound, "404 page not found")
}
