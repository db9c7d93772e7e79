package engine

import "testing"

func TestWriteFence(t *testing.T) {
	var f writeFence
	k, other := Key{Machine: "node", Namespace: "ns", Name: "a"}, Key{Machine: "node", Namespace: "ns", Name: "b"}
	if f.behind(k, "7") {
		t.Fatal("a fresh fence holds a key back")
	}
	f.committed(k, "7")
	if !f.behind(k, "7") {
		t.Error("the version a commit replaced is not seen as behind")
	}
	if f.behind(other, "7") {
		t.Error("another key is held back")
	}
	if f.behind(k, "8") || f.behind(k, "7") {
		t.Error("a newer version did not lift the fence for good")
	}
	f.committed(k, "")
	if f.behind(k, "") {
		t.Error("an empty resourceVersion (fake clients) must never hold a key back")
	}
}
