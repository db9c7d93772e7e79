package main

import (
	"context"
	"strings"
	"testing"
)

// Flags that cannot work are refused before the operator connects to
// anything.
func TestOperatorRefusesUnusableFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gd2-list-interval", "0s"}, "--gd2-list-interval must be positive"},
		{[]string{"--workers", "0"}, "--workers must be at least 1"},
		{[]string{"--kube-api-qps", "0"}, "--kube-api-qps and --kube-api-burst must be positive"},
		{[]string{"--resync", "0s"}, "--resync must be positive"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--heal-interval", "0s"}, "--heal-interval must be positive"},
		{[]string{"--lost-node-grace", "0s"}, "--lost-node-grace must be positive"},
		{[]string{"--max-wait", "-1s"}, "--max-wait not negative"},
		{[]string{"--watch-namespace", "team-a,Team_B"}, `--watch-namespace: namespace "Team_B"`},
		{[]string{"--watch-namespace", "team-a", "--watch-namespace", "team-a"}, `--watch-namespace: namespace "team-a" is named twice`},
		{[]string{"--leader-election-retry-period", "0s"}, "must be positive"},
		{[]string{"--leader-election-retry-period", "9s"}, "must exceed 1.2 times --leader-election-retry-period"},
		{[]string{"--etcd-image", ""}, "--etcd-image must name an image"},
		{[]string{"--csi-node-driver-registrar-image", " "}, "--csi-node-driver-registrar-image must name an image"},
		{[]string{"--leader-election-lease-duration", "10s"}, "--leader-election-lease-duration (10s) must exceed --leader-election-renew-deadline (10s)"},
	} {
		err := runOperator(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}
