// Command testtimes reads `go test -json` on stdin, prints each test's
// output as plain `go test -v` would, and ends with the slowest tests and
// the wall time: make test's budget, in sight (docs/testing.md).
//
//	go test -json ./... | go run ./hack/testtimes -top 10
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// progressAfter: with -quiet, a finished top-level test gets a line of its
// own when it took this long or failed, so a long run shows its progress
// without a line for each of the thousands of quick tests.
const progressAfter = 5 // seconds

// waitedLine is what a test logs when it waited for a place among those
// that run side by side (the e2e tests' framework.Places): go test counts
// the wait in the test's time, which is not the test's own.
var waitedLine = regexp.MustCompile(`waited (\S+) for one of the \d+ places`)

// result is a finished test, or package.
type result struct {
	name    string
	action  string
	elapsed time.Duration
}

func main() {
	top := flag.Int("top", 10, "how many of the slowest tests to list; 0 prints no summary")
	quiet := flag.Bool("quiet", false, "print only failing tests' output, a line per failed or slow (5 s or more) top-level test and each package's result, not every test's output")
	silent := flag.Bool("silent", false, "print nothing but the summary")
	since := flag.Int64("start", 0, "the run's start, in Unix seconds, for the wall time (default: when this command started)")
	flag.Parse()
	start := time.Now()
	if *since > 0 {
		start = time.Unix(*since, 0)
	}
	out := io.Writer(os.Stdout)
	if *silent {
		out = io.Discard
	}
	tests, pkgs, err := read(os.Stdin, out, *quiet)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testtimes: %v\n", err)
		os.Exit(2)
	}
	if *top > 0 {
		report(os.Stdout, tests, pkgs, *top, time.Since(start))
	}
}

// read copies the tests' output to out and returns the finished top-level
// tests and packages. With quiet, a test's output is printed only if it
// fails (and every package's summary line).
func read(in io.Reader, out io.Writer, quiet bool) (tests, pkgs []result, err error) {
	held := map[string][]string{}
	// waited is each test's own wait for a place; subWaited, for a
	// top-level test, the shortest wait among its subtests': a test whose
	// subtests take the places waits until the first of them has one.
	waited := map[string]float64{}
	subWaited := map[string]float64{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(out, sc.Text()) // a build error, say
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if m := waitedLine.FindStringSubmatch(e.Output); m != nil {
				if d, err := time.ParseDuration(m[1]); err == nil {
					waited[key] += d.Seconds()
					if top, _, sub := strings.Cut(e.Test, "/"); sub {
						topKey := e.Package + " " + top
						if w, ok := subWaited[topKey]; !ok || d.Seconds() < w {
							subWaited[topKey] = d.Seconds()
						}
					}
				}
			}
			if !quiet || e.Test == "" {
				fmt.Fprint(out, e.Output)
			} else {
				held[key] = append(held[key], e.Output)
			}
		case "pass", "fail", "skip":
			w, own := waited[key]
			if !own {
				w = subWaited[key]
			}
			e.Elapsed = max(e.Elapsed-w, 0)
			delete(waited, key)
			delete(subWaited, key)
			if e.Action == "fail" && quiet {
				fmt.Fprint(out, strings.Join(held[key], ""))
			}
			if quiet && e.Test != "" && !strings.Contains(e.Test, "/") && e.Action != "skip" && (e.Action == "fail" || e.Elapsed >= progressAfter) {
				fmt.Fprintf(out, "--- %s %s (%.0fs)\n", strings.ToUpper(e.Action), e.Test, e.Elapsed)
			}
			delete(held, key)
			d := time.Duration(e.Elapsed * float64(time.Second))
			switch {
			case e.Test == "":
				pkgs = append(pkgs, result{e.Package, e.Action, d})
			case !strings.Contains(e.Test, "/"):
				tests = append(tests, result{e.Package + "." + e.Test, e.Action, d})
			}
		}
	}
	return tests, pkgs, sc.Err()
}

// report prints the slowest top tests, the slowest packages and the wall
// time.
func report(out io.Writer, tests, pkgs []result, top int, wall time.Duration) {
	slowest := func(rs []result) {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].elapsed > rs[j].elapsed })
		for _, r := range rs[:min(top, len(rs))] {
			fmt.Fprintf(out, "  %8s  %-4s  %s\n", r.elapsed.Round(time.Second), r.action, r.name)
		}
	}
	fmt.Fprintf(out, "\nthe %d slowest tests:\n", min(top, len(tests)))
	slowest(tests)
	fmt.Fprintf(out, "the %d slowest packages:\n", min(top, len(pkgs)))
	slowest(pkgs)
	failed := 0
	for _, r := range append(tests, pkgs...) {
		if r.action == "fail" {
			failed++
		}
	}
	fmt.Fprintf(out, "wall time: %s (%d tests in %d packages, %d failed)\n", wall.Round(time.Second), len(tests), len(pkgs), failed)
}
