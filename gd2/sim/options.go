package sim

import (
	"net/http"
	"sort"
	"strings"
)

// optionDef is one volume option the simulator knows. GD2 derives these
// from xlator tables; the simulator keeps the ones an operator touches.
type optionDef struct {
	Key     string // normalised "<graph>/<xlator>.<name>"
	Default string
	Level   string // Basic, Advanced, Experimental, Deprecated
	Values  []string
}

const optSelfHeal = "cluster/replicate.self-heal-daemon"

var volumeOptionDefs = []optionDef{
	{Key: optSelfHeal, Default: "on", Level: "Advanced", Values: []string{"on", "off"}},
	{Key: "cluster/replicate.quorum-type", Default: "auto", Level: "Basic", Values: []string{"none", "auto", "fixed"}},
	{Key: "cluster/replicate.quorum-count", Default: "0", Level: "Basic"},
	{Key: "cluster/replicate.favorite-child-policy", Default: "none", Level: "Basic", Values: []string{"none", "size", "ctime", "mtime", "majority"}},
	{Key: "cluster/replicate.data-self-heal", Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: "cluster/distribute.min-free-disk", Default: "10%", Level: "Basic"},
	{Key: "cluster/disperse.self-heal-daemon", Default: "on", Level: "Advanced", Values: []string{"on", "off"}},
	{Key: "performance/write-behind.write-behind", Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: "performance/io-cache.cache-size", Default: "32MB", Level: "Basic"},
	{Key: "storage/posix.storage-reserve", Default: "1", Level: "Basic"},
	{Key: "protocol/server.auth.addr.*.allow", Default: "*", Level: "Basic"},
	{Key: "features/shard.shard", Default: "off", Level: "Experimental", Values: []string{"on", "off"}},
	{Key: "debug/io-stats.count-fop-hits", Default: "off", Level: "Deprecated", Values: []string{"on", "off"}},
}

// lookupOption accepts the normalised key, "<xlator>.<name>", and the
// legacy glusterd "cluster.<name>" spelling for replicate options.
func lookupOption(key string) *optionDef {
	for i := range volumeOptionDefs {
		d := &volumeOptionDefs[i]
		if d.Key == key {
			return d
		}
		short := d.Key[strings.IndexByte(d.Key, '/')+1:]
		if short == key {
			return d
		}
		if strings.HasPrefix(short, "replicate.") && "cluster."+strings.TrimPrefix(short, "replicate.") == key {
			return d
		}
	}
	return nil
}

// defaultVolumeOptions is GD2's option profile by volume type: replicate
// volumes get the self-heal daemon off, disperse volumes on.
func defaultVolumeOptions(t string) map[string]string {
	switch t {
	case typeReplicate:
		return map[string]string{optSelfHeal: "off"}
	case typeDisperse:
		return map[string]string{optSelfHeal: "on"}
	}
	return map[string]string{}
}

func (s *Simulator) normaliseOptions(opts map[string]string, adv, exp, dep bool) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range opts {
		d := lookupOption(k)
		if d == nil {
			return nil, errf(http.StatusBadRequest, "%s: %s", msgInvalidOption, k)
		}
		if d.Level == "Advanced" && !adv || d.Level == "Experimental" && !exp || d.Level == "Deprecated" && !dep {
			return nil, errf(http.StatusBadRequest, "%s: %s is %s, set allow-%s-options", msgOptionNeedsFlag, k,
				strings.ToLower(d.Level), strings.ToLower(d.Level))
		}
		if len(d.Values) > 0 && !inList(d.Values, v) {
			return nil, errf(http.StatusBadRequest, "%s: %s=%s", msgInvalidOption, k, v)
		}
		out[d.Key] = v
	}
	return out, nil
}

func volumeOptionsSet(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	var req wireVolOptionReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	opts, err := c.s.normaliseOptions(req.Options, req.AllowAdvancedOptions, req.AllowExperimentalOptions, req.AllowDeprecatedOptions)
	if err != nil {
		return 0, nil, err
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	for k, val := range opts {
		v.Options[k] = val
	}
	return http.StatusOK, wireVolumeOf(v), nil
}

func optionGet(v *volume, d *optionDef) wireVolOptionGet {
	val, set := v.Options[d.Key]
	if !set {
		val = d.Default
	}
	return wireVolOptionGet{Name: d.Key, Value: val, Modified: set && val != d.Default, DefaultValue: d.Default, OptionLevel: d.Level}
}

func volumeOptionsGet(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	out := make([]wireVolOptionGet, 0, len(volumeOptionDefs))
	for i := range volumeOptionDefs {
		out = append(out, optionGet(v, &volumeOptionDefs[i]))
	}
	return http.StatusOK, out, nil
}

func volumeOptionGet(c *call, v *volume, name string) (int, any, error) {
	d := lookupOption(name)
	if d == nil {
		return 0, nil, errf(http.StatusNotFound, "%s: %s", msgInvalidOption, name)
	}
	return http.StatusOK, optionGet(v, d), nil
}

func volumeOptionsReset(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	var req wireVolOptionResetReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if req.All {
		v.Options = map[string]string{}
		return http.StatusOK, wireVolumeOf(v), nil
	}
	for _, k := range req.Options {
		d := lookupOption(k)
		if d == nil {
			return 0, nil, errf(http.StatusBadRequest, "%s: %s", msgInvalidOption, k)
		}
		delete(v.Options, d.Key)
	}
	return http.StatusOK, wireVolumeOf(v), nil
}

// Cluster-wide options.

var clusterOptionDefaults = map[string]string{
	"cluster.shared-storage":             "off",
	"cluster.op-version":                 "50000",
	"cluster.max-op-version":             "50000",
	"cluster.brick-multiplex":            "off",
	"cluster.max-bricks-per-process":     "250",
	"cluster.localtime-logging":          "off",
	"block-hosting-volume-size":          "5GiB",
	"auto-create-block-hosting-volumes":  "true",
	"block-hosting-volume-replica-count": "3",
	"block-hosting-volume-type":          "Replicate",
	"auto-delete-block-hosting-volumes":  "false",
}

var boolClusterOptions = map[string][]string{
	"cluster.shared-storage":            {"on", "off"},
	"cluster.brick-multiplex":           {"on", "off"},
	"cluster.localtime-logging":         {"on", "off"},
	"auto-create-block-hosting-volumes": {"true", "false"},
	"auto-delete-block-hosting-volumes": {"true", "false"},
}

// clusterOptionsGet lists every known key in random order, as GD2 ranges
// over a map.
func clusterOptionsGet(c *call) (int, any, error) {
	out := make([]wireClusterOption, 0, len(clusterOptionDefaults))
	keys := make([]string, 0, len(clusterOptionDefaults))
	for k := range clusterOptionDefaults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		def := clusterOptionDefaults[k]
		val, set := c.m.ClusterOptions[k]
		if !set {
			val = def
		}
		out = append(out, wireClusterOption{Key: k, Value: val, Default: def, Modified: set})
	}
	c.s.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return http.StatusOK, out, nil
}

func clusterOptionsSet(c *call) (int, any, error) {
	var req wireClusterOptionReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	for k, v := range req.Options {
		if _, ok := clusterOptionDefaults[k]; !ok {
			return 0, nil, errf(http.StatusInternalServerError, "Invalid global option: %s", k)
		}
		if vals, ok := boolClusterOptions[k]; ok && !inList(vals, v) {
			return 0, nil, errf(http.StatusBadRequest, "invalid value %q for option %s", v, k)
		}
	}
	if err := c.lock("clusteroptions"); err != nil {
		return 0, nil, err
	}
	for k, v := range req.Options {
		c.m.ClusterOptions[k] = v
	}
	return http.StatusOK, cloneMap(c.m.ClusterOptions), nil
}
