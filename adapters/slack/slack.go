package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/outbox"
)

// Platform is the ThreadRef.Platform of Slack threads.
const Platform = "slack"

// Config configures the adapter. cmd/claudeops reads the fields with an
// env tag from the variable it names (its default in envDefault) and sets
// the others.
type Config struct {
	BotToken      string `env:"SLACK_BOT_TOKEN,unset"`
	AppToken      string `env:"SLACK_APP_TOKEN,unset"`      // Socket Mode when set
	SigningSecret string `env:"SLACK_SIGNING_SECRET,unset"` // HTTP Events API when set
	// APIURL overrides https://slack.com/api/ (proxies, tests). It must end
	// with a slash.
	APIURL string `env:"SLACK_API_URL"`
	// AllowBots lets other bots' messages through (the bot's own never are).
	AllowBots bool `env:"CLAUDEOPS_SLACK_ALLOW_BOTS"`
	// EditInterval is the least time between two edits of one message
	// (default 2 s: chat.update is Tier 3 for the whole workspace).
	EditInterval time.Duration
	// FinalHold is how long a text's final edit waits for the turn's
	// footer to ride in its message (default outbox.FinalHold; tests
	// lengthen it to count the calls whatever the machine's load).
	FinalHold time.Duration
	// Streaming uses chat.startStream/appendStream/stopStream for Claude's
	// text when the workspace allows it (it is tried once, then remembered).
	Streaming bool `env:"CLAUDEOPS_SLACK_STREAMING" envDefault:"false"`
	// HTTP mode limits (see ConfigureServer): reading a request's headers
	// (default 10 s), reading its body (default 10 s), the body's size
	// (default 1 MiB).
	HTTPHeaderTimeout, HTTPBodyTimeout time.Duration
	HTTPMaxBody                        int64
	// CatchUp is how far back catch-up reaches (catchup.go): on each
	// Socket Mode connect (at start in HTTP mode) the threads with a
	// session active within it are read back for what the bot missed. 0
	// turns it off; it also needs SetCatchUpState.
	CatchUp time.Duration `env:"CLAUDEOPS_CATCH_UP" envDefault:"24h"`
	// CatchUpMax bounds the messages one catch-up picks up per thread and
	// per channel (default 50; a read looks at no more than 4× as many).
	CatchUpMax int
	// catchUpPage is the limit of each read (default 100; tests page).
	catchUpPage int
	// RateScale multiplies the per-method budgets (tests with a faster fake).
	RateScale float64
	// FileOrigins are where the bot token may be sent for a file's
	// url_private: scheme://host[:port], exactly (default
	// https://files.slack.com; tests: the fake's URL).
	FileOrigins []string
	Logger      *slog.Logger
	HTTPClient  *http.Client
	Now         func() time.Time
}

// Adapter is the Slack adapter. Create it with New, then Run it.
type Adapter struct {
	// mailroom carries the bot's calls to Slack: Post, Edit, UpdatePrompt
	// and SetStatus queue and return, Ask and PostFile wait their turn
	// (outbox.Mailroom). Its methods are the adapter's; the calls it
	// makes are direct's, which wait on the platform.
	*mailroom
	cfg Config
	api *slack.Client
	log *slog.Logger
	lim *limiter
	obs adapters.APIObserver // told of each Web API call (observe.go); nil: none
	now func() time.Time
	hc  *http.Client
	// fileHC downloads files: it follows no redirect off FileOrigins.
	fileHC  *http.Client
	origins map[string]bool // FileOrigins, as parsed
	// edit sends the edits of posted messages: coalesced per message,
	// paced, final states urgent, a text's final state held briefly for
	// the footer (see outbox.Editor).
	edit *outbox.Editor[pendingEdit]
	// status sends assistant.threads.setStatus off the caller's path: a
	// turn's prompt must not wait for Slack (it is coalesced per thread
	// like an edit, so the latest status lands last).
	status *outbox.Editor[statusEdit]

	mu        sync.Mutex
	botUserID string
	botID     string
	teamID    string
	webURL    string // the workspace's, from auth.test (link.go)
	deliver   func(context.Context, adapters.Event) error
	ready     chan struct{}
	readyOnce sync.Once

	// msgs are the messages this run posted, by msgKey; the least recently
	// used are forgotten past msgsCap (an edit of one then fails, an
	// update of a prompt still works: see UpdatePrompt).
	msgs *outbox.Registry[string, *posted]
	// asker is who last wrote in each thread (threadKey): streams are
	// addressed to a recipient. Bounded like msgs.
	asker *outbox.Registry[string, string]
	// prompts are the open prompts this run posted, by prompt id; a
	// forgotten one is left to the bot (see fromPrompt).
	prompts *outbox.Registry[string, promptLoc]
	// threads is what the adapter knows of each thread's status line.
	threads *outbox.Registry[string, *threadState]
	// responses are the response_urls of slash commands, by channel and
	// user, kept while Slack accepts them (slash.go).
	responses *outbox.Registry[string, string]

	streamOK int32 // 0 unknown, 1 works, -1 refused

	// catchUpState and mayUse are what catch-up needs of the bot
	// (SetCatchUpState); catchUps runs it (catchup.go).
	catchUpState CatchUpState
	mayUse       func(channel, user string) bool
	catchUps     catchUps
	seen         seenLive

	replays replayGuard // signed HTTP requests already handled

	conn *adapters.ConnTracker // how the link stands (conn.go)
}

// New validates the configuration; it does no I/O.
func New(cfg Config) (*Adapter, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("slack: SLACK_BOT_TOKEN is required")
	}
	if cfg.AppToken == "" && cfg.SigningSecret == "" {
		return nil, errors.New("slack: set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP Events API)")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.EditInterval <= 0 {
		cfg.EditInterval = 2 * time.Second
	}
	if cfg.FinalHold <= 0 {
		cfg.FinalHold = outbox.FinalHold
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if len(cfg.FileOrigins) == 0 {
		cfg.FileOrigins = []string{slackFileOrigin}
	}
	origins, err := parseOrigins(cfg.FileOrigins)
	if err != nil {
		return nil, err
	}
	opts := []slack.Option{slack.OptionHTTPClient(cfg.HTTPClient)}
	if cfg.APIURL != "" {
		u := cfg.APIURL
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		opts = append(opts, slack.OptionAPIURL(u))
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	a := &Adapter{
		cfg:       cfg,
		log:       cfg.Logger.With("adapter", Platform),
		api:       slack.New(cfg.BotToken, opts...),
		lim:       newLimiter(cfg.RateScale, cfg.Now),
		now:       cfg.Now,
		hc:        cfg.HTTPClient,
		fileHC:    fileClient(cfg.HTTPClient, origins),
		origins:   origins,
		msgs:      outbox.NewRegistry[string, *posted](msgsCap, 0, cfg.Now),
		asker:     outbox.NewRegistry[string, string](askerCap, 0, cfg.Now),
		prompts:   outbox.NewRegistry[string, promptLoc](promptsCap, 0, cfg.Now),
		threads:   outbox.NewRegistry[string, *threadState](askerCap, 0, cfg.Now),
		responses: outbox.NewRegistry[string, string](responsesCap, responseURLTTL, cfg.Now),
		ready:     make(chan struct{}),
		conn:      adapters.NewConnTracker(connVia(cfg), cfg.Now),
	}
	if cfg.Streaming {
		a.streamOK = 0
	} else {
		a.streamOK = -1
	}
	a.startEditors()
	a.mailroom = outbox.NewMailroom((*direct)(a), a.log)
	return a, nil
}

// Bounds of what the adapter remembers (see msgs, asker, prompts).
const (
	msgsCap    = 4096
	askerCap   = 4096
	promptsCap = 4096
)

// Close makes what the bot queued, then sends the edits and statuses still
// pending (each for at most 30 s) and stops the editors. Call it after the
// bot has shut down.
func (a *Adapter) Close() {
	a.mailroom.CloseWithin(closeDrain)
	a.edit.Close()
	a.status.Close()
}

// Name implements adapters.Adapter.
func (a *Adapter) Name() string { return Platform }

// Run identifies the bot (auth.test), then receives events over Socket Mode
// (when an app token is set) until ctx ends. HTTP deliveries are served by
// HTTPHandler once Run has identified the bot. On each connect (at start in
// HTTP mode) it catches up on what was posted while it was away
// (catchup.go).
func (a *Adapter) Run(ctx context.Context, deliver func(context.Context, adapters.Event) error) error {
	var auth *slack.AuthTestResponse
	err := a.call(ctx, "auth.test", "", func(ctx context.Context) error {
		var err error
		auth, err = a.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		a.conn.Set(adapters.Disconnected, fmt.Errorf("auth.test: %w", err))
		return fmt.Errorf("slack auth.test: %w", err)
	}
	defer a.conn.Set(adapters.Disconnected, nil) // stopped
	a.mu.Lock()
	a.botUserID, a.botID, a.teamID, a.deliver = auth.UserID, auth.BotID, auth.TeamID, deliver
	a.webURL = auth.URL
	a.mu.Unlock()
	a.readyOnce.Do(func() { close(a.ready) })
	a.log.Info("slack: connected", "team", auth.TeamID, "bot_user", auth.UserID)

	// A catch-up ends with Run, whichever way Run ends.
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		a.waitCatchUps()
		a.saveSeen(ctx)
	}()
	if a.cfg.AppToken == "" {
		// HTTP mode: Slack's retries of what it could not deliver while
		// the bot was down have ended or come now; the rest is read back.
		a.conn.Set(adapters.Connected, nil)
		a.startCatchUp(ctx)
		<-ctx.Done()
		return nil
	}
	return a.runSocket(ctx)
}

func (a *Adapter) identity() (botUser, botID, team string, deliver func(context.Context, adapters.Event) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botUserID, a.botID, a.teamID, a.deliver
}

// runSocket runs Socket Mode: slack-go reconnects on refresh_requested,
// warnings and dropped sockets; envelopes not acked are delivered again by
// Slack, and our dedupe (by message) makes each post one turn.
func (a *Adapter) runSocket(ctx context.Context) error {
	sm := socketmode.New(a.api)
	errc := make(chan error, 1)
	go func() { errc <- sm.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			<-errc
			return nil
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			a.conn.Set(adapters.Disconnected, err)
			return fmt.Errorf("slack socket mode: %w", err)
		case evt, ok := <-sm.Events:
			if !ok {
				return nil
			}
			a.onSocketEvent(ctx, sm, evt)
		}
	}
}

func (a *Adapter) onSocketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	a.noteSocket(evt)
	switch evt.Type {
	case socketmode.EventTypeConnected:
		a.log.Info("slack: socket connected")
		// What was posted while no socket was open is read back; the
		// events of this connection come after this one.
		a.startCatchUp(ctx)
	case socketmode.EventTypeDisconnect:
		a.log.Info("slack: socket disconnected; reconnecting")
	case socketmode.EventTypeEventsAPI:
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok || evt.Request == nil {
			return
		}
		if err := a.onEventsAPI(ctx, ev); err != nil {
			// Not acked: Slack delivers it again.
			a.log.Log(ctx, adapters.DeliverLevel(err), "slack: event not recorded; leaving it for redelivery", "err", err)
			return
		}
		_ = sm.Ack(*evt.Request)
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slack.InteractionCallback)
		if !ok || evt.Request == nil {
			return
		}
		a.onInteraction(ctx, cb)
		_ = sm.Ack(*evt.Request)
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok || evt.Request == nil {
			return
		}
		_ = sm.Ack(*evt.Request)
		go a.onSlash(ctx, cmd)
	case socketmode.EventTypeErrorBadMessage, socketmode.EventTypeInvalidAuth, socketmode.EventTypeIncomingError:
		a.log.Warn("slack: socket mode problem", "type", evt.Type, "data", fmt.Sprint(evt.Data))
	}
}

// onEventsAPI turns a message or app_mention into an event and delivers it.
// The error is non-nil only when the bot could not record it.
func (a *Adapter) onEventsAPI(ctx context.Context, ev slackevents.EventsAPIEvent) error {
	if ev.Type != slackevents.CallbackEvent {
		return nil
	}
	var in inbound
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		in = inbound{user: e.User, text: e.Text, channel: e.Channel, ts: e.TimeStamp, threadTS: e.ThreadTimeStamp,
			botID: e.BotID, files: e.Files, appMention: true}
	case *slackevents.MessageEvent:
		in = inbound{user: e.User, text: e.Text, channel: e.Channel, ts: e.TimeStamp, threadTS: e.ThreadTimeStamp,
			subtype: e.SubType, botID: e.BotID, channelType: e.ChannelType}
		if e.Message != nil {
			in.files = e.Message.Files
		}
	default:
		return nil
	}
	return a.deliverInbound(ctx, in, ev.TeamID)
}

// stripMention removes the bot's mention and unescapes Slack's &amp; &lt; &gt;.
func stripMention(text, botUser string) string {
	text = strings.ReplaceAll(text, "<@"+botUser+">", "")
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	return strings.TrimSpace(text)
}

// onInteraction turns a click into an event.
func (a *Adapter) onInteraction(ctx context.Context, cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	_, _, _, deliver := a.identity()
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	thread := cb.Container.ThreadTs
	if thread == "" {
		thread = cb.Message.ThreadTimestamp
	}
	if thread == "" {
		thread = cb.Container.MessageTs
	}
	for _, act := range cb.ActionCallback.BlockActions {
		var state slack.BlockActionStates
		if cb.BlockActionState != nil {
			state = *cb.BlockActionState
		}
		click, ok := actionClick(act, state)
		if !ok {
			continue
		}
		ev := adapters.Event{
			Thread: adapters.ThreadRef{Platform: Platform, Channel: channel, Thread: thread},
			User:   adapters.User{ID: cb.User.ID, Name: cb.User.Name},
			Click:  &click,
		}
		if !a.fromPrompt(&ev, cb) {
			a.log.Warn("slack: click dropped: it names a prompt of another message", "prompt", click.PromptID,
				"channel", cb.Container.ChannelID, "message", cb.Container.MessageTs, "user", cb.User.ID)
			continue
		}
		if err := deliver(ctx, ev); err != nil {
			a.log.Warn("slack: click not delivered", "err", err)
		}
	}
}
