package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
)

// idleBuilds are the builds whose idle memory BenchmarkIdleMemory reports:
// the default (every runner), and the tags that leave runners' clients out.
var idleBuilds = []string{"", "nokubernetes", "nokubernetes,nodocker"}

// BenchmarkIdleMemory is what a started bot holds doing nothing, per build:
// it builds cmd/claudeops (without -race), starts it as `claudeops console`
// with the local runner, waits until it is ready (the console's greeting
// and the scheduler started), and reads /proc/<pid>/status. One op is one
// start. Reported: VmRSS and its anonymous and file-backed parts (the
// binary's pages among them), the bytes every package's init allocated
// (GODEBUG=inittrace=1, summed) and the binary's size. The figures in
// docs/PERFORMANCE.md ("How much memory does the bot hold?"):
//
//	go test -tags goolm -run '^$' -bench IdleMemory -benchtime 5x ./cmd/claudeops/
func BenchmarkIdleMemory(b *testing.B) {
	for _, tags := range idleBuilds {
		b.Run(cmp.Or(tags, "default"), func(b *testing.B) {
			bin := buildBot(b, tags)
			var rss, anon, file float64
			n := 0
			for b.Loop() {
				st := idleStatus(b, bin)
				rss, anon, file = rss+st["VmRSS"], anon+st["RssAnon"], file+st["RssFile"]
				n++
			}
			b.ReportMetric(rss/float64(n)/1024, "RSS-MiB")
			b.ReportMetric(anon/float64(n)/1024, "anon-MiB")
			b.ReportMetric(file/float64(n)/1024, "file-MiB")
			b.ReportMetric(float64(initBytes(b, bin))/1e6, "init-MB")
			fi, err := os.Stat(bin)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/1e6, "binary-MB")
		})
	}
}

// TestLeftOutRunnersRefused: a build that leaves the kubernetes and docker
// runners out still knows their names, and refuses them at load (78) with
// the tag that left them out; the local runner still runs.
func TestLeftOutRunnersRefused(t *testing.T) {
	bin := buildBot(t, "nokubernetes,nodocker")
	for _, runner := range []string{"kubernetes", "docker"} {
		t.Run(runner, func(t *testing.T) {
			cmd := exec.Command(bin, "console")
			cmd.Env = append(idleEnv(t), "CLAUDEOPS_RUNNER="+runner)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitConfig {
				t.Fatalf("exit: %v, want %d; output:\n%s", err, exitConfig, out)
			}
			if want := "-tags no" + runner + ", which leaves the " + runner + " runner out"; !strings.Contains(string(out), want) {
				t.Errorf("output does not say %q:\n%s", want, out)
			}
		})
	}
	if st := idleStatus(t, bin); st["VmRSS"] == 0 {
		t.Error("the local runner did not start")
	}
}

// buildBot builds cmd/claudeops with goolm and tags into a temporary
// directory and returns the binary's path.
func buildBot(t testing.TB, tags string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "claudeops")
	cmd := exec.Command("go", "build", "-tags", strings.TrimSuffix("goolm,"+tags, ","), "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags goolm,%s: %v\n%s", tags, err, out)
	}
	return bin
}

// idleEnv is a console bot's environment: its own state, work and home,
// the local runner, the pinned CLI.
func idleEnv(t testing.TB) []string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"work", "home"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return testkit.CLIEnv(filepath.Join(dir, "home"), "http://127.0.0.1:9",
		"CLAUDEOPS_STATE_DIR="+filepath.Join(dir, "state"), "CLAUDEOPS_WORKDIR="+filepath.Join(dir, "work"),
		"CLAUDEOPS_CLAUDE_BIN="+testcli.Bin(t), "CLAUDEOPS_RUNNER=local")
}

// idleStatus starts bin as a console bot, waits until it is ready, and
// returns its /proc/<pid>/status figures in kB (VmRSS, RssAnon, RssFile,
// VmHWM); the bot is ended before it returns.
func idleStatus(t testing.TB, bin string) map[string]float64 {
	t.Helper()
	cmd := exec.Command(bin, "console")
	cmd.Env = idleEnv(t)
	var out, log lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &log
	stdin, err := cmd.StdinPipe() // held open: the console waits for input
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	testkit.WaitForf(t, testkit.Long, func() bool {
		return strings.Contains(out.String(), "claudeops console:") && strings.Contains(log.String(), "scheduler started")
	}, func() string { return "the bot is not ready; its log:\n" + log.String() })
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	fig := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[2] == "kB" {
			v, _ := strconv.ParseFloat(f[1], 64)
			fig[strings.TrimSuffix(f[0], ":")] = v
		}
	}
	return fig
}

// initBytes is what every package's init allocated in bin, by the
// runtime's init trace ("init <pkg> @… ms, … ms clock, <n> bytes, … allocs").
func initBytes(t testing.TB, bin string) int {
	t.Helper()
	cmd := exec.Command(bin, "version")
	cmd.Env = append(idleEnv(t), "GODEBUG=inittrace=1")
	var trace bytes.Buffer
	cmd.Stderr = &trace
	_ = cmd.Run() // the trace is written before main, whatever main says
	total := 0
	for l := range strings.Lines(trace.String()) {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] == "init" && f[len(f)-3] == "bytes," {
			n, err := strconv.Atoi(f[len(f)-4])
			if err != nil {
				t.Fatalf("init trace line %q: %v", l, err)
			}
			total += n
		}
	}
	if total == 0 {
		t.Fatalf("no init trace from %s version:\n%s", bin, trace.String())
	}
	return total
}
