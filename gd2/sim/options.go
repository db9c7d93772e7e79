package sim

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
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
	{Key: optDataHeal, Default: "off", Level: "Advanced", Values: afrHealValues},
	{Key: optMetadataHeal, Default: "off", Level: "Advanced", Values: afrHealValues},
	{Key: optEntryHeal, Default: "off", Level: "Advanced", Values: afrHealValues},
	{Key: "cluster/distribute.min-free-disk", Default: "10%", Level: "Basic"},
	{Key: "cluster/disperse.self-heal-daemon", Default: "on", Level: "Advanced", Values: []string{"on", "off"}},
	{Key: optQuickRead, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: optIOCache, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: optReaddirAhead, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: optReadAhead, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: optWriteBehind, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: optOpenBehind, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: optMdCache, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: optNlCache, Default: "on", Level: "Basic", Values: []string{"on", "off"}},
	{Key: "performance/io-cache.cache-size", Default: "32MB", Level: "Basic"},
	{Key: "storage/posix.storage-reserve", Default: "1", Level: "Basic"},
	{Key: "protocol/server.auth.addr.*.allow", Default: "*", Level: "Basic"},
	{Key: "features/shard.shard", Default: "off", Level: "Experimental", Values: []string{"on", "off"}},
	{Key: "debug/io-stats.count-fop-hits", Default: "off", Level: "Deprecated", Values: []string{"on", "off"}},
}

// AFR's data, metadata and entry self-heal switches. GD2 writes the
// self-heal daemons' volfile with them as the volume has them, AFR's
// default off, so the daemons heal nothing a full heal queues until they
// are on (legacy glusterd forces them on for the daemon).
const (
	optDataHeal     = "cluster/replicate.data-self-heal"
	optMetadataHeal = "cluster/replicate.metadata-self-heal"
	optEntryHeal    = "cluster/replicate.entry-self-heal"
)

// afrHealValues are the values AFR takes for its self-heal switches; the
// first five switch healing on.
var afrHealValues = []string{"1", "on", "yes", "true", "enable", "0", "off", "no", "false", "disable", "open"}

// daemonsHeal reports whether the self-heal daemons of v heal what a full
// heal queues: its volfile is not stale and data, metadata and entry
// self-heal are on.
func daemonsHeal(v *volume) bool {
	if v.ShdStale {
		return false
	}
	for _, k := range []string{optDataHeal, optMetadataHeal, optEntryHeal} {
		if !slices.Contains(afrHealValues[:5], v.Options[k]) {
			return false
		}
	}
	return true
}

// The performance translators' on/off switches: GD2 names them after the
// translator, so the translator name appears twice.
const (
	optQuickRead    = "performance/quick-read.quick-read"
	optIOCache      = "performance/io-cache.io-cache"
	optReaddirAhead = "performance/readdir-ahead.readdir-ahead"
	optReadAhead    = "performance/read-ahead.read-ahead"
	optWriteBehind  = "performance/write-behind.write-behind"
	optOpenBehind   = "performance/open-behind.open-behind"
	optMdCache      = "performance/md-cache.md-cache"
	optNlCache      = "performance/nl-cache.nl-cache"
)

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

// defaultVolumeOptions is the option profile GD2 writes into a new volume
// by the type of its first subvol. Every key of the profile appears in the
// volume's options: nine for replicate, eight for distribute and disperse.
func defaultVolumeOptions(t string) map[string]string {
	switch t {
	case typeReplicate:
		return map[string]string{
			optSelfHeal: "off", optQuickRead: "off", optIOCache: "on", optReaddirAhead: "off", optReadAhead: "off",
			optWriteBehind: "on", optOpenBehind: "on", optMdCache: "on", optNlCache: "on",
		}
	case typeDisperse:
		return map[string]string{
			optSelfHeal: "on", optMdCache: "off", optOpenBehind: "off", optQuickRead: "off", optIOCache: "off",
			optReaddirAhead: "off", optReadAhead: "off", optWriteBehind: "off",
		}
	}
	return map[string]string{
		optQuickRead: "off", optIOCache: "on", optReaddirAhead: "off", optReadAhead: "off",
		optWriteBehind: "on", optOpenBehind: "on", optMdCache: "on", optNlCache: "on",
	}
}

// stepOptionValidate is the v1 txn step that validates volume options on
// set: its failures are code-2 errors, unlike the same checks on create.
const stepOptionValidate = "vol-option.Validate"

// optionError is why GD2 refuses an option, in its words. On create it is
// the whole 400 message; on set it follows msgOptionValidation in a code-2
// error.
type optionError string

const msgOptionValidation = "validation failed for volume option: "

// normaliseOptions maps every key to its normalised name after GD2's
// checks: known key, level flag given, value allowed.
func normaliseOptions(opts map[string]string, adv, exp, dep bool) (map[string]string, optionError) {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // one deterministic first failure
	out := map[string]string{}
	for _, k := range keys {
		v := opts[k]
		d := lookupOption(k)
		switch {
		case d == nil:
			return nil, optionError("option not found: " + k)
		case d.Level == "Advanced" && !adv:
			return nil, optionError("option " + k + " is an advanced option. To set it pass the advanced flag")
		case d.Level == "Experimental" && !exp:
			return nil, optionError("option " + k + " is an experimental option. To set it pass the experimental flag")
		case d.Level == "Deprecated" && !dep:
			return nil, optionError("option " + k + " will be deprecated in future releases. To set it pass the deprecated flag")
		case len(d.Values) > 0 && !inList(d.Values, v):
			// GD2 fills value() with the key and key() with the value.
			return nil, optionError(fmt.Sprintf("failed to validate value(%s) for key(%s): valid values are %s", k, v, strings.Join(d.Values, ", ")))
		}
		out[d.Key] = v
	}
	return out, ""
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
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	// Validation is a step of the v1 txn: the liveness gate (every peer of
	// the cluster) runs first, and a refusal is a code-2 error.
	if err := c.gate(c.allPeers()); err != nil {
		return 0, nil, err
	}
	opts, oerr := normaliseOptions(req.Options, req.AllowAdvancedOptions, req.AllowExperimentalOptions, req.AllowDeprecatedOptions)
	if oerr != "" {
		return 0, nil, txnErr(c.serving.ID, stepOptionValidate, msgOptionValidation+string(oerr))
	}
	for k, val := range opts {
		v.Options[k] = val
	}
	if val, ok := opts[optSelfHeal]; ok && val == "on" && v.State == volStarted && isHealable(v) {
		// GD2's self-heal actor writes the daemons a new volfile, naming
		// the volume's bricks as they are now.
		v.ShdStale = false
	}
	return http.StatusOK, wireVolumeOf(v), nil
}

// optionGet is one option as GD2 reports it, under the name it was asked
// by: modified whenever the volume's options hold a key ending in that
// name (a value set at its default, or put there at create, counts), and
// then with that key's value; else its default.
func optionGet(v *volume, d *optionDef, name string) wireVolOptionGet {
	out := wireVolOptionGet{Name: name, Value: d.Default, DefaultValue: d.Default, OptionLevel: d.Level}
	for _, k := range slices.Sorted(maps.Keys(v.Options)) {
		if strings.HasSuffix(k, name) {
			out.Value, out.Modified = v.Options[k], true
			break
		}
	}
	return out
}

func volumeOptionsGet(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	out := make([]wireVolOptionGet, 0, len(volumeOptionDefs))
	for i := range volumeOptionDefs {
		out = append(out, optionGet(v, &volumeOptionDefs[i], volumeOptionDefs[i].Key))
	}
	return http.StatusOK, out, nil
}

func volumeOptionGet(c *call, v *volume, name string) (int, any, error) {
	d := lookupOption(name)
	if d == nil {
		return 0, nil, errf(http.StatusNotFound, "option not found: %s", name)
	}
	return http.StatusOK, optionGet(v, d, name), nil
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
	for _, k := range req.Options {
		if lookupOption(k) == nil {
			return 0, nil, errf(http.StatusBadRequest, "option not found: %s", k)
		}
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if err := c.gate(c.allPeers()); err != nil {
		return 0, nil, err
	}
	if req.All {
		v.Options = map[string]string{}
		return http.StatusOK, wireVolumeOf(v), nil
	}
	for _, k := range req.Options {
		delete(v.Options, lookupOption(k).Key)
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
