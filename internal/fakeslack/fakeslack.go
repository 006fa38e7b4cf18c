package fakeslack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configures a Server. Zero values get the defaults noted per field;
// the defaults match the IDs used in testdata/fixtures (Slack's payloads).
type Options struct {
	BotToken      string // "xoxb-fake-bot-token"
	AppToken      string // "xapp-1-fake-app-token" (apps.connections.open only)
	SigningSecret string // "fakesigningsecret"

	TeamID    string // "T0FAKETEAM"
	BotUserID string // "U0FAKEBOT1"
	BotID     string // "B0FAKEBOT1"

	AppID             string // "A0FAKEAPP1"
	TeamDomain        string // "fakeslack"
	TeamName          string // "Fake Slack"
	BotName           string // "claudebot"
	VerificationToken string // "fakeverificationtoken" (the deprecated "token" field of payloads)

	// Strict enforces the per-method Web API rate limits of Slack's "Rate limits" page
	// (Tier 2 20/min, Tier 3 50/min, Tier 4 100/min, chat.postMessage 1/s per
	// channel), multiplied by RateScale, with a modest burst. Over the limit:
	// HTTP 429, Retry-After: <whole seconds ≥ 1>, {"ok":false,"error":"ratelimited"}.
	Strict    bool
	RateScale float64 // default 1

	// AckTimeout is Slack's 3 s: an events_api envelope not acked within it is
	// redelivered (new envelope_id, same event_id, retry_attempt+1,
	// retry_reason "timeout"), up to 3 times; an interactive or slash envelope
	// not acked within it is a Violation (the user sees an error). Default 3s.
	AckTimeout time.Duration

	// Streaming allows chat.startStream/appendStream/stopStream; without it
	// they answer {"ok":false,"error":"feature_not_enabled"}.
	Streaming bool
	// StreamLifetime: a stream is closed by Slack this long after it started
	// (later appends: message_not_in_streaming_state). Default 5m.
	StreamLifetime time.Duration
	// StatusTimeout: an assistant.threads.setStatus status clears after this
	// (and on the bot's next reply in the thread). Default 2m.
	StatusTimeout time.Duration

	// PingInterval between WebSocket pings sent to each socket (slack-go
	// reconnects when none arrives for its OptionPingInterval, 30 s by
	// default). Default 5s.
	PingInterval time.Duration
	// DisconnectGrace: after a disconnect message the server closes the socket
	// itself if the client hasn't after this long. Default 10s.
	DisconnectGrace time.Duration

	// GiveUpAfter is how long an events_api event that finds no socket
	// open is held for one: Slack retries an undelivered event
	// (immediately, after 1 and 5 minutes) and then drops it, so an app
	// that was away longer never receives it; the message stays in the
	// workspace (conversations.history/replies). Default 6m. GiveUp drops
	// the waiting events at once.
	GiveUpAfter time.Duration

	// Clock is the time message ts are made from (default time.Now): a
	// test moves it to post messages that are hours old.
	Clock func() time.Time

	// NoBotEcho stops the echo of the bot's own posts/edits/deletes as message
	// events (Slack sends them when message.* events are subscribed).
	NoBotEcho bool

	// HTTP delivery instead of Socket Mode, per kind, like the Request URLs of
	// an app's configuration: events (JSON body, retried with
	// X-Slack-Retry-Num/-Reason when not answered 2xx within HTTPTimeout),
	// interactivity (form payload=<json>), slash commands (form fields; a
	// JSON or text body in the answer is the command's response). All signed
	// with SigningSecret.
	EventsURL, InteractivityURL, CommandsURL string
	HTTPTimeout                              time.Duration // default 3s

	// ForbidMentions makes live mention syntax (<!here>, <!channel>,
	// <!everyone>, <@U…>, <#C…>, <!subteam^…>, bare @here/@channel/
	// @everyone) in anything a bot write leaves a message showing a
	// Violation: checked after every post, update, ephemeral, stream and
	// file share (its initial_comment) on the message's whole content (a
	// stream's pieces concatenated), so a mention assembled from pieces is
	// caught the moment it is whole.
	// For tests whose bot output comes from the model.
	ForbidMentions bool

	// Verbose logs every Web API call and socket frame with t.Logf.
	Verbose bool
}

func (o *Options) setDefaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&o.BotToken, "xoxb-fake-bot-token")
	def(&o.AppToken, "xapp-1-fake-app-token")
	def(&o.SigningSecret, "fakesigningsecret")
	def(&o.TeamID, "T0FAKETEAM")
	def(&o.BotUserID, "U0FAKEBOT1")
	def(&o.BotID, "B0FAKEBOT1")
	def(&o.AppID, "A0FAKEAPP1")
	def(&o.TeamDomain, "fakeslack")
	def(&o.TeamName, "Fake Slack")
	def(&o.BotName, "claudebot")
	def(&o.VerificationToken, "fakeverificationtoken")
	if o.RateScale <= 0 {
		o.RateScale = 1
	}
	durDef := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	durDef(&o.AckTimeout, 3*time.Second)
	durDef(&o.StreamLifetime, 5*time.Minute)
	durDef(&o.StatusTimeout, 2*time.Minute)
	durDef(&o.PingInterval, 5*time.Second)
	durDef(&o.DisconnectGrace, 10*time.Second)
	durDef(&o.HTTPTimeout, 3*time.Second)
	durDef(&o.GiveUpAfter, 6*time.Minute)
	if o.Clock == nil {
		o.Clock = time.Now
	}
}

// Server is a running fake Slack workspace.
type Server struct {
	// URL is the base, "http://127.0.0.1:<port>"; the Web API is at URL+"/api/".
	URL string
	// Opts are the options in effect (defaults filled in): use Opts.BotToken etc.
	Opts Options

	t      testing.TB
	srv    *http.Server
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines (sockets, HTTP deliveries)
	client *http.Client   // for HTTP-mode deliveries

	mu      sync.Mutex
	closed  bool
	changed chan struct{} // closed and replaced on every state change

	lastSec, lastUsec int64 // last ts handed out
	seq               int   // for IDs

	users     map[string]*User
	channels  map[string]*channelState
	chanOrder []string
	files     map[string]*fileState
	downloads []FileDownload
	statuses  map[string]*statusState
	responses map[string]*responseURL

	calls      []Call
	violations []string
	buckets    map[string]*bucket
	windows    map[string]window
	faults     map[string][]Fault
	holds      map[string]*Hold

	tickets   map[string]time.Time
	offline   bool // SetOffline: no socket can connect
	conns     []*wsConn
	connSeq   int
	rr        int
	pending   []*envelope
	envelopes []*envelope
	envByID   map[string]*envelope
	states    map[string]map[string]map[string]any // channel/ts/user → block_id → action_id → state
	lastHTTP  map[string]signedReq                 // by envelope type, for ReplayHTTP
}

// Start serves a fake workspace on 127.0.0.1:0 until t's cleanup. The
// workspace has the bot user, users U0ALICE001 (alice) and U0BOB00001 (bob),
// and the public channel C0GENERAL1 (#general) with the bot in it; add more
// with AddUser/AddChannel (user actions also create unknown users/channels).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	opts.setDefaults()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeslack: listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		URL:       "http://" + ln.Addr().String(),
		Opts:      opts,
		t:         t,
		ctx:       ctx,
		cancel:    cancel,
		client:    &http.Client{},
		changed:   make(chan struct{}),
		users:     map[string]*User{},
		channels:  map[string]*channelState{},
		files:     map[string]*fileState{},
		statuses:  map[string]*statusState{},
		responses: map[string]*responseURL{},
		buckets:   map[string]*bucket{},
		windows:   map[string]window{},
		faults:    map[string][]Fault{},
		tickets:   map[string]time.Time{},
		envByID:   map[string]*envelope{},
		states:    map[string]map[string]map[string]any{},
		lastHTTP:  map[string]signedReq{},
	}
	s.addUserLocked(User{ID: opts.BotUserID, Name: opts.BotName, RealName: opts.BotName, IsBot: true})
	s.addUserLocked(User{ID: "U0ALICE001", Name: "alice", RealName: "Alice Example", Email: "alice@example.com"})
	s.addUserLocked(User{ID: "U0BOB00001", Name: "bob", RealName: "Bob Example", Email: "bob@example.com"})
	s.addChannelLocked(Channel{ID: "C0GENERAL1", Name: "general", Members: []string{"U0ALICE001", "U0BOB00001"}})

	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.handleAPI)
	mux.HandleFunc("/link/", s.handleSocket)
	mux.HandleFunc("/upload/", s.handleUpload)
	mux.HandleFunc("/files-pri/", s.handleFileDownload)
	mux.HandleFunc("/actions/", s.handleResponseURL)
	mux.HandleFunc("/commands/", s.handleResponseURL)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.violatef("request to unknown path %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("fakeslack: serve: %v", err)
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *Server) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conns := append([]*wsConn(nil), s.conns...)
	for _, e := range s.envelopes {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	s.notifyLocked()
	s.mu.Unlock()

	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
	for _, c := range conns {
		c.closeNow()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.t.Logf("fakeslack: background goroutines still running at cleanup")
	}
	if v := s.Violations(); len(v) > 0 {
		s.t.Logf("fakeslack: %d violation(s):\n  %s", len(v), strings.Join(v, "\n  "))
	}
}

// notifyLocked wakes WaitFor callers. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// WaitFor calls cond whenever the workspace changes (a Web API call, an ack,
// a connection, ...) until it returns true or timeout passes; it reports
// whether cond became true. cond may call the Server's methods.
func (s *Server) WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond) // for time-based conditions
	defer tick.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Opts.Verbose {
		s.t.Logf("fakeslack: "+format, args...)
	}
}

// violatef records a violation. It takes s.mu.
func (s *Server) violatef(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violateLocked(format, args...)
}

func (s *Server) violateLocked(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.violations = append(s.violations, msg)
	s.logf("VIOLATION: %s", msg)
	s.notifyLocked()
}

// Violations lists everything the app did that real Slack would reject,
// drop or hold against it: calls inside a Retry-After window, payloads failing
// Slack's validation (invalid_blocks, msg_too_long, markdown_text_conflict,
// ...), truncated text, unknown methods, bad tokens, oversize or unknown
// acks, interactive/slash envelopes not acked in time, events never acked,
// response_url overuse. Tests assert it is empty.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Call is one Web API call as the server saw it.
type Call struct {
	Method string
	// Params are the arguments, token removed: form fields as strings (JSON
	// arguments such as blocks stay JSON-encoded strings, as slack-go sends
	// them); a JSON body decoded to its JSON values.
	Params map[string]any
	Time   time.Time
	Status int    // HTTP status answered
	Error  string // Slack's error code, "" when ok
	// Messages are response_metadata.messages of an error (invalid_blocks).
	Messages []string
}

// Param returns a parameter as a string ("" if absent; non-string JSON values
// are JSON-encoded).
func (c Call) Param(name string) string {
	v, ok := c.Params[name]
	if !ok {
		return ""
	}
	if str, ok := v.(string); ok {
		return str
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Calls returns every Web API call to method in order ("" for all methods).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Fault is a scripted failure for the next call(s) of a method, applied after
// authentication and instead of the method's effect.
type Fault struct {
	Error      string // Slack error code, e.g. "internal_error", "rate_limited", "message_limit_exceeded"
	Status     int    // HTTP status; default 200 (429 when RetryAfter > 0)
	RetryAfter int    // seconds; with status 429 sets Retry-After and opens a Retry-After window
	Times      int    // how many calls it applies to; default 1
}

// Fail scripts f for the next call(s) of method.
func (s *Server) Fail(method string, f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	if f.Status == 0 {
		f.Status = http.StatusOK
		if f.RetryAfter > 0 {
			f.Status = http.StatusTooManyRequests
		}
	}
	if f.Error == "" && f.Status == http.StatusTooManyRequests {
		f.Error = "ratelimited"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f)
}

// FailNext makes the next call of method answer HTTP 200 {"ok":false,"error":errCode}.
func (s *Server) FailNext(method, errCode string) {
	s.Fail(method, Fault{Error: errCode})
}
