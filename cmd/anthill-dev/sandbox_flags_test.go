package main

import (
	"context"
	"strings"
	"testing"
)

// sandbox up refuses flags it cannot honour before it starts anything,
// --real-node among the others.
func TestSandboxUpRefusesBadFlagsFirst(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "--real-node", "--zones", "4"}, "--zones must be between 1 and 3"},
		{[]string{"up", "--nodes-per-zone", "0"}, "--nodes-per-zone must be at least 1"},
		{[]string{"up", "--real-node", "--gluster-nodes", "9"}, "--gluster-nodes must be between 1 and 8"},
		{[]string{"up", "extra"}, `unexpected argument "extra"`},
		{[]string{"sideways"}, "usage: anthill-dev sandbox up|down"},
	} {
		err := runSandbox(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("sandbox %s: %v; want an error with %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
