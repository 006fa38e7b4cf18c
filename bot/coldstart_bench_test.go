package bot

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
)

// BenchmarkColdStart is a message in a thread without a session to the
// CLI's first model request, the bot's real launch (its options, the
// extensions' launch hooks, the runner; the real CLI, the fake model API)
// per runner, recorded in docs/PERFORMANCE.md:
//
//	go test -tags goolm -run '^$' -bench ColdStart -benchtime 10x ./bot/
//
// "bot" is the launch as it is; "without-mcp" is the same launch without
// the bot's own MCP server (no --mcp-config), so what declaring it costs
// stays visible beside it. Each op is a bot of its own, stopped after the
// turn: no other claude process runs while one starts.
func BenchmarkColdStart(b *testing.B) {
	runners := []struct {
		name   string
		runner func(b *testing.B, base string) claudeproc.Runner
	}{
		{"local", func(*testing.B, string) claudeproc.Runner { return nil }},
		{"sandbox", func(b *testing.B, base string) claudeproc.Runner {
			testcli.Bwrap(b)
			s := claudeproc.Sandbox{HomeBase: filepath.Join(base, "sandbox-homes")}
			if err := s.Check(context.Background(), b.TempDir()); err != nil {
				b.Skip(err) // bwrap is there but cannot make its namespaces on this host
			}
			return s
		}},
	}
	for _, r := range runners {
		for _, launch := range []string{"bot", "without-mcp"} {
			b.Run(r.name+"/"+launch, func(b *testing.B) {
				var total time.Duration
				for range b.N {
					total += coldStart(b, r.runner(b, b.TempDir()), launch == "without-mcp")
				}
				b.ReportMetric(0, "ns/op") // each op also starts and stops a bot
				b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "ms/first-request")
			})
		}
	}
}

// coldStart runs a bot on runner (nil: local), says one line in a new
// thread and returns the time to the first model request; noMCP takes the
// bot's MCP server off the launch.
func coldStart(b *testing.B, runner claudeproc.Runner, noMCP bool) time.Duration {
	b.Helper()
	var mu sync.Mutex
	var first time.Time
	h := newHarness(b, func(_ context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first = time.Now()
		}
		return fakeanthropic.TextReply("cold answer")
	}, func(c *testConfig) {
		if runner != nil {
			c.Runner = runner
		}
	})
	if noMCP {
		h.stopBot()
		h.wrapStart = func(s starter) starter {
			return func(ctx context.Context, o claudeproc.Options) (process, error) {
				o.SDKMCPServers = nil
				return s(ctx, o)
			}
		}
		h.startBot()
	}
	asked := time.Now()
	h.say("hello")
	h.expect(`cold answer`)
	h.stopBot()
	mu.Lock()
	defer mu.Unlock()
	return first.Sub(asked)
}
