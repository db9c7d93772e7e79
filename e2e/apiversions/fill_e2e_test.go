//go:build e2e

package apiversions

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file fills API objects by reflection, so a field added to the Go
// types is in the round-trip and migration tests without anyone listing
// it, and checks that the objects a test uses leave no field at its zero
// value.

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
	durationType = reflect.TypeFor[metav1.Duration]()
)

// leafTypes are the struct types that are one value in JSON.
func isLeaf(t reflect.Type) bool {
	return t == quantityType || t == timeType || t == durationType
}

// fixedTime is every filled time: whole seconds, as RFC 3339 keeps them.
var fixedTime = metav1.NewTime(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))

// filler gives every string field a distinct value ("s1", "s2", ...) that
// passes the API's DNS-label and label-value rules; the variants then set
// the fields whose rules want more (enums, versions, URLs, paths).
type filler struct{ n int }

func (f *filler) fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		f.fill(v.Elem())
	case reflect.Struct:
		switch v.Type() {
		case quantityType:
			v.Set(reflect.ValueOf(resource.MustParse("1Gi")))
			return
		case timeType:
			v.Set(reflect.ValueOf(fixedTime))
			return
		case durationType:
			v.Set(reflect.ValueOf(metav1.Duration{Duration: time.Minute}))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			sf := v.Type().Field(i)
			if !sf.IsExported() || skipField(sf) {
				continue
			}
			f.fill(v.Field(i))
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		f.fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		f.fill(k)
		e := reflect.New(v.Type().Elem()).Elem()
		f.fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		f.n++
		v.SetString(fmt.Sprintf("s%d", f.n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	default:
		panic(fmt.Sprintf("fill: unhandled kind %s", v.Kind()))
	}
}

// skipField leaves out what is not the API's own: the object's type and
// metadata (set by each test) and JSON-ignored fields.
func skipField(sf reflect.StructField) bool {
	tag := sf.Tag.Get("json")
	return tag == "-" || sf.Type == reflect.TypeFor[metav1.TypeMeta]() || sf.Type == reflect.TypeFor[metav1.ObjectMeta]()
}

// jsonName is a field's name in JSON; "" for an embedded (inlined) struct.
func jsonName(sf reflect.StructField) string {
	tag := sf.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	if sf.Anonymous && name == "" {
		return ""
	}
	if name == "" {
		return sf.Name
	}
	return name
}

func join(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	}
	return path + "." + name
}

// leafPaths lists every leaf a value of type t can have, as JSON paths
// with [] for a list element and {} for a map value.
func leafPaths(t reflect.Type, path string, out map[string]bool) {
	switch {
	case t.Kind() == reflect.Pointer:
		leafPaths(t.Elem(), path, out)
	case t.Kind() == reflect.Struct && !isLeaf(t):
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() || skipField(sf) {
				continue
			}
			leafPaths(sf.Type, join(path, jsonName(sf)), out)
		}
	case t.Kind() == reflect.Slice:
		leafPaths(t.Elem(), path+"[]", out)
	case t.Kind() == reflect.Map:
		leafPaths(t.Elem(), path+"{}", out)
	default:
		out[path] = true
	}
}

// setLeaves adds to out the leaves of v that are not at their zero value.
func setLeaves(v reflect.Value, path string, out map[string]bool) {
	switch {
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() {
			setLeaves(v.Elem(), path, out)
		}
	case v.Kind() == reflect.Struct && !isLeaf(v.Type()):
		for i := 0; i < v.NumField(); i++ {
			sf := v.Type().Field(i)
			if !sf.IsExported() || skipField(sf) {
				continue
			}
			setLeaves(v.Field(i), join(path, jsonName(sf)), out)
		}
	case v.Kind() == reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			setLeaves(v.Index(i), path+"[]", out)
		}
	case v.Kind() == reflect.Map:
		for _, k := range v.MapKeys() {
			setLeaves(v.MapIndex(k), path+"{}", out)
		}
	case v.Type() == quantityType:
		if q := v.Interface().(resource.Quantity); !q.IsZero() {
			out[path] = true
		}
	case v.Type() == timeType:
		if tm := v.Interface().(metav1.Time); !tm.IsZero() {
			out[path] = true
		}
	default:
		if !v.IsZero() {
			out[path] = true
		}
	}
}

// requireEveryField fails unless, together, the objects set every leaf of
// their type except those in unsettable (each with its reason).
func requireEveryField[T any](t *testing.T, objs []T, unsettable map[string]string) {
	t.Helper()
	all := map[string]bool{}
	leafPaths(reflect.TypeFor[T](), "", all)
	set := map[string]bool{}
	for i := range objs {
		setLeaves(reflect.ValueOf(&objs[i]).Elem(), "", set)
	}
	var missing []string
	for p := range all {
		if _, ok := unsettable[p]; !set[p] && !ok {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("%s: no test object sets %d fields: %s", reflect.TypeFor[T]().Name(), len(missing), strings.Join(missing, ", "))
	}
	if len(all) < 50 {
		t.Fatalf("%s: only %d leaf fields found: the walk is broken", reflect.TypeFor[T]().Name(), len(all))
	}
	t.Logf("%s: %d objects set all %d leaf fields (%d unsettable)", reflect.TypeFor[T]().Name(), len(objs), len(all), len(unsettable))
}
