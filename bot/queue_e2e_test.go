package bot

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// gatedProcess relays a claude process's events; once armed, it holds the
// events that follow the next result until released, so a test can put a
// chat message exactly between one turn's result and the CLI taking up what
// it had queued. It reports each message sent to claude on sent.
type gatedProcess struct {
	process
	out     chan claudeproc.Event
	armed   *atomic.Bool
	passed  chan<- struct{}
	release <-chan struct{}
	sent    chan<- string
}

func (g *gatedProcess) Events() <-chan claudeproc.Event { return g.out }

func (g *gatedProcess) Send(m claudeproc.UserMessage) error {
	err := g.process.Send(m)
	select {
	case g.sent <- m.Text:
	default:
	}
	return err
}

func (g *gatedProcess) relay() {
	defer close(g.out)
	for ev := range g.process.Events() {
		g.out <- ev
		if _, ok := ev.(*claudeproc.Result); ok && g.armed.CompareAndSwap(true, false) {
			g.passed <- struct{}{}
			<-g.release
		}
	}
}

// A message that arrives after a turn's result but before the CLI takes up
// the messages it queued during that turn is queued behind them by the CLI;
// the thread must say so, as it does for any message sent while a turn
// runs. (Seen on a loaded CI machine: the bot took the CLI for idle, started
// a turn of its own for the message and never showed it queued or taken up.)
func TestConsoleMessageBetweenResultAndQueuedTurn(t *testing.T) {
	hold, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	inner := script(hold)
	h := newHarness(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "gate one") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("gated answer")}, Hold: gate}
		}
		return inner(ctx, req)
	}, nil)

	var armed atomic.Bool
	passed, relayGo, sent := make(chan struct{}, 1), make(chan struct{}), make(chan string, 16)
	h.stopBot()
	h.wrapStart = func(s starter) starter {
		return func(ctx context.Context, o claudeproc.Options) (process, error) {
			p, err := s(ctx, o)
			if err != nil {
				return nil, err
			}
			g := &gatedProcess{process: p, out: make(chan claudeproc.Event), armed: &armed, passed: passed, release: relayGo, sent: sent}
			go g.relay()
			return g, nil
		}
	}
	h.startBot()

	h.say("gate one")
	h.api.WaitRequests(1, waitTimeout)
	h.say("slow two")
	h.expect(`\* Queued: “slow two”`)
	armed.Store(true)
	close(gate)
	select {
	case <-passed:
	case <-time.After(waitTimeout):
		t.Fatal("the gated turn never ended")
	}
	h.say("first follow-up")
	for deadline := time.After(waitTimeout); ; {
		select {
		case text := <-sent:
			if !strings.HasSuffix(text, "first follow-up") {
				continue
			}
		case <-deadline:
			t.Fatal("the follow-up was never sent to claude")
		}
		break
	}
	close(relayGo)
	h.expect(`\* Queued: “first follow-up”`)
	release()
	h.expect(`— ✓`)
	h.expect(`Taken up: “first follow-up”`)
	h.expect(`claude: ok: .*first follow-up`)
}
