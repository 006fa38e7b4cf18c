package kubernetes

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/kubetest"
	"github.com/claudeops/claudeops/internal/testcli"
)

// The Pod path's cost against the local runner, with the real CLI and the
// fake model API (docs/PERFORMANCE.md):
//
//	scripts/test -run '^$' -bench 'FirstText' -benchtime 5x ./claudeproc/kubernetes/
//
// cold: a new session (process or Pod) and its first turn, to the first
// text delta; warm: one more turn of a live session.

func benchEnv(api *fakeanthropic.Server) []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test", "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
	}
}

func benchAPI(b *testing.B) *fakeanthropic.Server {
	return fakeanthropic.Start(b, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("first words")}}
	})
}

// firstText sends a message and waits for the first text delta, then for
// the turn's result.
func firstText(b *testing.B, p *claudeproc.Process, timed bool) {
	if timed {
		b.StartTimer()
	}
	if err := p.SendText("hello"); err != nil {
		b.Fatal(err)
	}
	texted := false
	deadline := time.After(3 * time.Minute)
	for {
		select {
		case ev, ok := <-p.Events():
			if !ok {
				b.Fatal("the CLI ended")
			}
			switch e := ev.(type) {
			case *claudeproc.StreamEvent:
				if e.DeltaType == "text_delta" && !texted {
					texted = true
					if timed {
						b.StopTimer()
					}
				}
			case *claudeproc.Result:
				if !texted {
					b.Fatalf("a result before any text: %+v", e)
				}
				return
			}
		case <-deadline:
			b.Fatal("no turn")
		}
	}
}

func benchRunner(b *testing.B, pod bool) claudeproc.Options {
	api := benchAPI(b)
	o := claudeproc.Options{Env: benchEnv(api), Session: claudeproc.Session{Channel: "bench/c", Thread: "bench/c/1"}}
	if !pod {
		o.Bin, o.Dir, o.Runner = testcli.Bin(b), b.TempDir(), claudeproc.Local{}
		o.Env = append(o.Env, "HOME="+b.TempDir())
		return o
	}
	c := kubetest.Require(b)
	claim := b.TempDir()
	bed := &testBed{c: c, ns: c.Namespace(b), claim: claim}
	c.HostPathClaim(b, bed.ns, "work", bed.claim)
	// The model key reaches a Pod only from the operator's Secret.
	_, err := c.Client().CoreV1().Secrets(bed.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "model"}, StringData: map[string]string{"ANTHROPIC_API_KEY": "sk-test"},
	}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	bed.r = bed.runner(b, "bench-"+randHex(3), func(c *Config) { c.Secret = "model" })
	o.Bin, o.Dir, o.Runner = "claude", bed.workDir(b, "w"), bed.r
	return o
}

// benchCold times a session's start and its first turn to the first text.
func benchCold(b *testing.B, pod bool) {
	o := benchRunner(b, pod)
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		b.StartTimer()
		p, err := claudeproc.Start(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		firstText(b, p, true) // stops the timer at the first text
		p.Close(context.Background())
	}
}

func benchWarm(b *testing.B, pod bool) {
	o := benchRunner(b, pod)
	p, err := claudeproc.Start(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	firstText(b, p, false)
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		firstText(b, p, true)
	}
}

func BenchmarkFirstTextColdLocal(b *testing.B) { benchCold(b, false) }
func BenchmarkFirstTextColdPod(b *testing.B)   { benchCold(b, true) }
func BenchmarkFirstTextWarmLocal(b *testing.B) { benchWarm(b, false) }
func BenchmarkFirstTextWarmPod(b *testing.B)   { benchWarm(b, true) }
