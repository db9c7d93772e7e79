package monitoring

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Options are what a deployment may change in the rules: where the
// runbooks are, the Prometheus job the operator is scraped as, and the
// alert thresholds. DefaultOptions are what anthill ships (and what
// manifests/monitoring holds); the chart takes each as a value and
// `anthill monitoring` as a flag.
type Options struct {
	// RunbookBaseURL is prefixed to <alert>.md for each alert's
	// runbook_url.
	RunbookBaseURL string
	// OperatorJob is the job label AnthillOperatorDown looks for.
	OperatorJob string
	// Thresholds by Threshold.Name; a missing name takes its default.
	Thresholds map[string]float64
}

// Threshold is one alert threshold a deployment may change. Name is the
// key in Options.Thresholds, the chart's
// monitoring.prometheusRule.thresholds.<Name> and
// `anthill monitoring --threshold <Name>=<value>`.
type Threshold struct {
	Name    string
	Default float64
	// Max bounds the value (100 for a percentage); Min is always above 0.
	Max  float64
	Help string
}

// Names of the thresholds.
const (
	CapacityHighPercent              = "capacityHighPercent"
	CapacityCriticalPercent          = "capacityCriticalPercent"
	VolumeUtilizationHighPercent     = "volumeUtilizationHighPercent"
	VolumeUtilizationCriticalPercent = "volumeUtilizationCriticalPercent"
	BrickUtilizationHighPercent      = "brickUtilizationHighPercent"
	BrickUtilizationCriticalPercent  = "brickUtilizationCriticalPercent"
	NodeDrainStuckHours              = "nodeDrainStuckHours"
	CertificateExpiryDays            = "certificateExpiryDays"
	ReconcileErrorsPerMinute         = "reconcileErrorsPerMinute"
)

// Thresholds are every threshold, in the order the chart's values list
// them.
var Thresholds = []Threshold{
	{CapacityHighPercent, 80, 100, "AnthillCapacityHigh fires above this percentage of a cluster's raw capacity used."},
	{CapacityCriticalPercent, 90, 100, "AnthillCapacityCritical fires above this percentage of a cluster's raw capacity used."},
	{VolumeUtilizationHighPercent, 80, 100, "AnthillVolumeUtilizationHigh fires above this percentage of a volume used."},
	{VolumeUtilizationCriticalPercent, 90, 100, "AnthillVolumeUtilizationCritical fires above this percentage of a volume used."},
	{BrickUtilizationHighPercent, 80, 100, "AnthillBrickUtilizationHigh fires above this percentage of a brick used."},
	{BrickUtilizationCriticalPercent, 90, 100, "AnthillBrickUtilizationCritical fires above this percentage of a brick used."},
	{NodeDrainStuckHours, 1, 24 * 365, "AnthillNodeDrainStuck fires when a node has been draining longer than this many hours."},
	{CertificateExpiryDays, 14, 365, "AnthillCertificateExpiring fires when a certificate anthill issued ends within this many days (anthill renews 30 days ahead)."},
	{ReconcileErrorsPerMinute, 3, 600, "AnthillReconcileErrors fires when a machine's failed syncs (conflicts aside) average more than this many a minute over 10 minutes, for 15 minutes."},
}

// DefaultOptions are anthill's own: its runbooks on GitHub, the job of
// its metrics Service, every threshold at its default.
func DefaultOptions() Options {
	return Options{RunbookBaseURL: RunbookBase, OperatorJob: OperatorJob, Thresholds: map[string]float64{}}
}

// Validate reports an unknown threshold name or a value out of its range,
// or an empty runbook URL or job.
func (o Options) Validate() error {
	if o.RunbookBaseURL == "" {
		return fmt.Errorf("the runbook base URL is empty")
	}
	if o.OperatorJob == "" {
		return fmt.Errorf("the operator job is empty")
	}
	for name, v := range o.Thresholds {
		t, ok := threshold(name)
		if !ok {
			return fmt.Errorf("unknown threshold %q (known: %s)", name, strings.Join(ThresholdNames(), ", "))
		}
		if v <= 0 || v > t.Max {
			return fmt.Errorf("threshold %s=%v is out of range (0, %v]", name, v, t.Max)
		}
	}
	return nil
}

// ThresholdNames lists the thresholds' names, sorted.
func ThresholdNames() []string {
	var out []string
	for _, t := range Thresholds {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

func threshold(name string) (Threshold, bool) {
	for _, t := range Thresholds {
		if t.Name == name {
			return t, true
		}
	}
	return Threshold{}, false
}

// params are the options as the text they put into the rules: numbers
// formatted for Go's output, or Helm actions for the chart's template.
type params struct {
	runbookBase, operatorJob string
	thresholds               map[string]string
}

func (p params) t(name string) string {
	s, ok := p.thresholds[name]
	if !ok {
		panic("monitoring: no threshold " + name)
	}
	return s
}

func (o Options) params() params {
	p := params{runbookBase: o.RunbookBaseURL, operatorJob: o.OperatorJob, thresholds: map[string]string{}}
	for _, t := range Thresholds {
		v, ok := o.Thresholds[t.Name]
		if !ok {
			v = t.Default
		}
		p.thresholds[t.Name] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return p
}
