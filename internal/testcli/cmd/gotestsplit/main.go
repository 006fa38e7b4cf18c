// Command gotestsplit runs `go test -json` with the given arguments and
// prints what `go test` would (each package's result line; a failed
// test's whole output), and writes to -list the tests that skipped because
// a setup was not ready yet: those whose skip says an environment variable
// matching -pending is not set (the Docker images, the cluster, Gitea, which
// scripts/test builds while the rest of the suite runs). Each line is a
// package's import path and a -run pattern of its top-level tests:
//
//	github.com/claudeops/claudeops/claudeproc/docker ^(TestBotGone|TestKillMidTurn)$
//
// At the end it names the top-level tests that took longer than -slow
// (60 s), slowest first, so that a run's log says which they are.
//
// Its exit code is go test's.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on a test's pass or fail
}

// timed is a top-level test and how long it took.
type timed struct {
	pkg, test string
	secs      float64
}

func main() {
	list := flag.String("list", "", "file to write the tests skipped for a pending setup to")
	pending := flag.String("pending", `CLAUDEOPS_TEST_(DOCKER_IMAGE|BUILD_IMAGE|RUNTIME_IMAGE|KUBECONFIG|KUBE_IMAGE|KUBE_NODE|GITEA_BIN)`, "what a pending setup's skip names")
	slow := flag.Duration("slow", 60*time.Second, "name the tests that took longer")
	flag.Parse()
	if *list == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gotestsplit -list FILE [-pending RE] -- <go test arguments>")
		os.Exit(2)
	}
	re, err := regexp.Compile(*pending)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotestsplit:", err)
		os.Exit(2)
	}
	cmd := exec.Command("go", append([]string{"test", "-json"}, flag.Args()...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotestsplit:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "gotestsplit:", err)
		os.Exit(2)
	}
	skipped, times := follow(out, os.Stdout, re)
	code := 0
	if err := cmd.Wait(); err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	fmt.Print(slowest(times, slow.Seconds()))
	if err := os.WriteFile(*list, []byte(lines(skipped)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gotestsplit:", err)
		code = 2
	}
	os.Exit(code)
}

// follow reads go test's JSON events from r, writes the human output to w
// and returns, by package, the top-level tests skipped for a pending setup,
// and how long each top-level test that ran took.
func follow(r io.Reader, w io.Writer, pending *regexp.Regexp) (map[string]map[string]bool, []timed) {
	var times []timed
	outputs := map[string]*strings.Builder{} // by package and test
	skipped := map[string]map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(w, sc.Text()) // build errors and the like
			continue
		}
		key := e.Package + " " + e.Test
		if (e.Action == "pass" || e.Action == "fail") && e.Test != "" && !strings.Contains(e.Test, "/") {
			times = append(times, timed{e.Package, e.Test, e.Elapsed})
		}
		switch e.Action {
		case "output":
			if e.Test == "" {
				if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") ||
					strings.HasPrefix(e.Output, "?") || strings.HasPrefix(e.Output, "---") || strings.Contains(e.Output, "[build failed]") {
					fmt.Fprint(w, e.Output)
				} else if outputs[key] == nil {
					outputs[key] = &strings.Builder{}
				}
				if b := outputs[key]; b != nil && !strings.HasPrefix(e.Output, "ok ") {
					b.WriteString(e.Output)
				}
				continue
			}
			if outputs[key] == nil {
				outputs[key] = &strings.Builder{}
			}
			outputs[key].WriteString(e.Output)
		case "skip":
			if e.Test != "" && outputs[key] != nil && pending.MatchString(outputs[key].String()) {
				top, _, _ := strings.Cut(e.Test, "/")
				if skipped[e.Package] == nil {
					skipped[e.Package] = map[string]bool{}
				}
				skipped[e.Package][top] = true
			}
			delete(outputs, key)
		case "pass":
			delete(outputs, key)
		case "fail":
			b := outputs[key]
			switch {
			case b == nil:
			case strings.Contains(e.Test, "/"):
				// A subtest's output goes with its parent's, printed when
				// the parent fails (as go test prints it).
				parent := e.Package + " " + e.Test[:strings.LastIndex(e.Test, "/")]
				if outputs[parent] == nil {
					outputs[parent] = &strings.Builder{}
				}
				outputs[parent].WriteString(b.String())
			case e.Test != "":
				fmt.Fprint(w, b.String())
			default:
				fmt.Fprint(w, nonResult(b.String()))
			}
			delete(outputs, key)
		}
	}
	return skipped, times
}

// slowest says which tests took over limit seconds, slowest first.
func slowest(times []timed, limit float64) string {
	var over []timed
	for _, t := range times {
		if t.secs > limit {
			over = append(over, t)
		}
	}
	if len(over) == 0 {
		return ""
	}
	sort.Slice(over, func(i, j int) bool { return over[i].secs > over[j].secs })
	var b strings.Builder
	fmt.Fprintf(&b, "gotestsplit: %d tests took over %.0f s:\n", len(over), limit)
	for _, t := range over {
		fmt.Fprintf(&b, "  %6.1f s  %s %s\n", t.secs, t.pkg, t.test)
	}
	return b.String()
}

// nonResult drops the package's result lines (printed already) from a
// failed package's own output (panics, TestMain errors).
func nonResult(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if line == "FAIL\n" || strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "ok ") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func lines(skipped map[string]map[string]bool) string {
	var pkgs []string
	for p := range skipped {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var b strings.Builder
	for _, p := range pkgs {
		var tests []string
		for t := range skipped[p] {
			tests = append(tests, regexp.QuoteMeta(t))
		}
		sort.Strings(tests)
		fmt.Fprintf(&b, "%s ^(%s)$\n", p, strings.Join(tests, "|"))
	}
	return b.String()
}
