package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// Facts keeps the channels' facts, by channel key; *store.Store is one.
// AddFact refuses what is over the store's bounds (store.ErrTooManyFacts,
// store.ErrFactTooLong); RemoveFact finds a fact only in its channel.
type Facts interface {
	AddFact(ctx context.Context, f store.Fact) (store.Fact, error)
	Facts(ctx context.Context, channelKey string) ([]store.Fact, error)
	RemoveFact(ctx context.Context, channelKey string, id int64) (store.Fact, bool, error)
}

// Act is what someone wants to do with a channel's facts.
type Act int

const (
	// Remember: store a fact (by command, or by accepting a proposal).
	Remember Act = iota
	// Forget: remove Check.Fact.
	Forget
)

// Check is one question to Config.May: may User do Act in Thread's
// channel (with Fact, for Forget)?
type Check struct {
	Thread thread.Thread
	User   adapters.User
	Act    Act
	Fact   store.Fact
}

// May answers a Check: true allows. Config.May may replace the default
// (DefaultMay).
type May func(ctx context.Context, c Check) bool

// DefaultMay follows the channel's memory setting (package settings):
// "anyone" (the default): anyone the bot lets into the channel remembers,
// and a fact is forgotten by its author or an admin of the channel;
// "admins": the channel's admins alone remember and forget; "off": nobody
// remembers, and its admins may still forget what was kept. Listing is
// anyone's.
func DefaultMay(_ context.Context, c Check) bool {
	w := thread.Where(c.Thread.Ref())
	admin := c.Thread.Scopes().IsAdmin(w, c.User.ID)
	switch c.Thread.Scopes().Get(w, settings.Memory).Text {
	case "off":
		return c.Act == Forget && admin
	case "admins":
		return admin
	}
	return c.Act == Remember || c.Fact.By == c.User.ID || admin
}

// Config builds the extension.
type Config struct {
	Facts Facts
	// May decides who may remember and forget; nil is DefaultMay.
	May May
}

// Extension keeps the channels' facts and gives them to their sessions.
type Extension struct {
	facts Facts
	may   May
}

// New makes the extension over cfg.Facts.
func New(cfg Config) *Extension {
	if cfg.May == nil {
		cfg.May = DefaultMay
	}
	return &Extension{facts: cfg.Facts, may: cfg.May}
}

// Name implements thread.Extension.
func (*Extension) Name() string { return "memory" }

// Init implements thread.Extension: a part needs only its thread.
func (*Extension) Init(thread.Host) {}

// Attach implements thread.Extension: every thread has a part, for the
// commands and the instructions.
func (e *Extension) Attach(t thread.Thread) any {
	return &part{ext: e, t: t, offers: map[string]*offer{}}
}

type part struct {
	ext *Extension
	t   thread.Thread
	// last is the facts' text last given: kept when the store cannot be
	// read, so that a failing read does not restart sessions without them.
	last string
	// offers are Claude's proposals the thread shows, by prompt id.
	offers map[string]*offer
	seq    int
}

func (p *part) key() string { return p.t.Ref().ChannelKey() }

// zeroFact is the Fact of a Check about remembering.
var zeroFact store.Fact

func (p *part) may(ctx context.Context, u adapters.User, act Act, f store.Fact) bool {
	return p.ext.may(ctx, Check{Thread: p.t, User: u, Act: act, Fact: f})
}

// factsHeader opens the section the facts make in the system prompt.
const factsHeader = "Facts this channel asked you to remember:"

// Instructions implements thread.Instructor: the channel's facts,
// numbered, each on one line.
func (p *part) Instructions(ctx context.Context) string {
	fs, err := p.ext.facts.Facts(ctx, p.key())
	if err != nil {
		p.t.Log().Error("read the channel's facts", "err", err)
		return p.last
	}
	p.last = ""
	if len(fs) > 0 {
		lines := []string{factsHeader}
		for i, f := range fs {
			lines = append(lines, fmt.Sprintf("%d. %s", i+1, flat(f.Text)))
		}
		p.last = strings.Join(lines, "\n")
	}
	return p.last
}

// flat is s on one line, its runs of white space one space: a fact cannot
// start a line of its own in the section (a number, a header).
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
