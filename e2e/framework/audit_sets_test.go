package framework

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestSavedUsesOfTwoShardsMergeAsOneRecorderWouldCountThem(t *testing.T) {
	t0 := time.Unix(1000, 0)
	get := Request{Verb: "get", Resource: "pods", Namespace: "ns"}
	list := Request{Verb: "list", Resource: "pods", Streamed: true}
	patch := Request{Verb: "patch", Resource: "pods", Namespace: "ns"}
	many := map[string]bool{}
	for i := range auditNamesPerRequest {
		many[fmt.Sprint("p", i)] = true
	}
	one := map[Request]*RequestUse{
		get:   {Allowed: 2, FirstTest: "TestLate", FirstAt: t0.Add(time.Minute), Names: map[string]bool{"a": true}},
		list:  {Denied: 1, FirstTest: "TestDenied", FirstAt: t0, Names: map[string]bool{}},
		patch: {Allowed: 1, FirstTest: "TestFull", FirstAt: t0, Names: many},
	}
	two := map[Request]*RequestUse{
		get:   {Allowed: 1, Denied: 1, FirstTest: "TestEarly", FirstAt: t0, Names: map[string]bool{"a": true, "b": true}},
		list:  {Allowed: 1, FirstTest: "TestAllowed", FirstAt: t0.Add(time.Hour), Names: map[string]bool{}},
		patch: {Allowed: 1, FirstTest: "TestOther", FirstAt: t0.Add(time.Second), Names: map[string]bool{"new": true}},
	}
	dir := t.TempDir()
	var loaded []map[Request]*RequestUse
	for i, uses := range []map[Request]*RequestUse{one, two} {
		path := filepath.Join(dir, fmt.Sprint(i))
		if err := SaveUses(path, uses); err != nil {
			t.Fatal(err)
		}
		got, err := LoadUses(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(uses) || got[list] == nil {
			t.Fatalf("process %d: loaded %+v, saved %+v", i, got, uses)
		}
		loaded = append(loaded, got)
	}
	all := map[Request]*RequestUse{}
	MergeUses(all, loaded[0])
	MergeUses(all, loaded[1])
	if u := all[get]; u.Allowed != 3 || u.Denied != 1 || u.FirstTest != "TestEarly" || len(u.Names) != 2 || u.NamesTruncated {
		t.Errorf("get: %+v, want 3 allowed and 1 denied, first by TestEarly, names a and b", u)
	}
	if u := all[list]; u.Allowed != 1 || u.Denied != 1 || u.FirstTest != "TestAllowed" {
		t.Errorf("list: %+v, want the allowed request's test though the denied one came first", u)
	}
	if u := all[patch]; u.Allowed != 2 || u.FirstTest != "TestFull" || len(u.Names) != auditNamesPerRequest || !u.NamesTruncated {
		t.Errorf("patch: %d names, truncated %v, first %s: want the bound kept and the overflow marked", len(u.Names), u.NamesTruncated, u.FirstTest)
	}
	if len(loaded[0][patch].Names) != auditNamesPerRequest {
		t.Errorf("merging changed its source's names")
	}
}
