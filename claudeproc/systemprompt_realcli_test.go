package claudeproc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestRealCLIResumedSystemPrompt proves what FreshSystemPrompt is for, on
// the real CLI: a conversation started with one appended text and resumed
// with another sends the first text still by default (the CLI's snapshot),
// and the new one with --system-prompt-snapshot off; the conversation
// itself is kept either way.
func TestRealCLIResumedSystemPrompt(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fresh bool
		want  string // the appended text the resumed request carries
		not   string
	}{
		{"snapshot on (the CLI's default)", false, "FIRST-TEXT", "SECOND-TEXT"},
		{"snapshot off", true, "SECOND-TEXT", "FIRST-TEXT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				return reply(fakeanthropic.Text("noted"))
			})
			p, r := c.start(func(o *Options) { o.AppendSystemPrompt, o.FreshSystemPrompt = "FIRST-TEXT", tt.fresh })
			if err := p.SendText("remember the word pineapple"); err != nil {
				t.Fatal(err)
			}
			ev, _ := r.waitFor(0, "result", isResult)
			session := ev.(*Result).SessionID
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p.Close(ctx)
			before := len(c.api.Requests())

			p2, r2 := c.start(func(o *Options) {
				o.Resume, o.AppendSystemPrompt, o.FreshSystemPrompt = session, "SECOND-TEXT", tt.fresh
			})
			if err := p2.SendText("which word?"); err != nil {
				t.Fatal(err)
			}
			r2.waitFor(0, "resumed result", isResult)
			var req *fakeanthropic.Request
			for _, q := range c.api.Requests()[before:] {
				if !q.IsProbe() && strings.Contains(q.LastUserText(), "which word?") {
					req = q
				}
			}
			if req == nil {
				t.Fatal("the resumed turn reached no model request")
			}
			sys := strings.Join(req.System, "\n")
			if !strings.Contains(sys, tt.want) || strings.Contains(sys, tt.not) {
				t.Errorf("the resumed request's system has %s=%v %s=%v, want only %s:\n%s", tt.want, strings.Contains(sys, tt.want), tt.not, strings.Contains(sys, tt.not), tt.want, sys)
			}
			if !strings.Contains(req.Transcript(), "pineapple") {
				t.Errorf("the resumed request lost the conversation:\n%s", req.Transcript())
			}
		})
	}
}
