package sim

import (
	"net/http"
	"strings"
)

// maxMetadataSize is GD2's limit on user metadata: the sum of key and
// value lengths over keys not starting with "_".
const maxMetadataSize = 4096

func metadataSize(md map[string]string) int {
	n := 0
	for k, v := range md {
		if !strings.HasPrefix(k, "_") {
			n += len(k) + len(v)
		}
	}
	return n
}

// checkUserMetadata rejects reserved keys and oversize maps with GD2's 400s.
func checkUserMetadata(md map[string]string) error {
	for k := range md {
		if strings.HasPrefix(k, "_") {
			return errf(http.StatusBadRequest, msgReservedKey)
		}
	}
	if metadataSize(md) > maxMetadataSize {
		return errf(http.StatusBadRequest, msgMetadataTooLarge)
	}
	return nil
}

// filterMatches implements GD2's ?key=&value= list filter. It returns how
// many times the item appears: with only a value, once per matching key.
func filterMatches(md map[string]string, key, value string, hasKey, hasValue bool) int {
	switch {
	case hasKey && hasValue:
		if v, ok := md[key]; ok && v == value {
			return 1
		}
		return 0
	case hasKey:
		if _, ok := md[key]; ok {
			return 1
		}
		return 0
	case hasValue:
		n := 0
		for _, v := range md {
			if v == value {
				n++
			}
		}
		return n
	}
	return 1
}

// listFilter reads GD2's filter query: first value of each, presence counts.
func listFilter(r *http.Request) (key, value string, hasKey, hasValue bool) {
	q := r.URL.Query()
	if vs, ok := q["key"]; ok && len(vs) > 0 {
		key, hasKey = vs[0], true
	}
	if vs, ok := q["value"]; ok && len(vs) > 0 {
		value, hasValue = vs[0], true
	}
	return
}
