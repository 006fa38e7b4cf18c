package matrix

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/outbox"
)

// Platform is the ThreadRef.Platform of Matrix threads.
const Platform = "matrix"

// httpRetries: failed requests (network errors, 429 rate limits, 5xx) are
// retried by mautrix, waiting as the server asks or with a growing backoff.
const httpRetries = 4

// Config configures the adapter. cmd/claudeops reads the fields with an
// env tag from the variable it names (its default in envDefault) and sets
// the others.
type Config struct {
	Homeserver string `env:"MATRIX_HOMESERVER"`
	UserID     string `env:"MATRIX_USER_ID"`
	// AccessToken and DeviceID, or Password: a password login stores the
	// token and device it gets and reuses them on the next start.
	AccessToken string `env:"MATRIX_ACCESS_TOKEN,unset"`
	DeviceID    string `env:"MATRIX_DEVICE_ID"`
	Password    string `env:"MATRIX_PASSWORD,unset"`
	// CryptoDB is the SQLite file of the end-to-end encryption state.
	CryptoDB string
	// PrivateDB readies CryptoDB before SQLite opens it so that it and the
	// files SQLite keeps beside it are the bot's user's alone (cmd passes
	// store.MakePrivate); nil leaves their modes to SQLite and the umask.
	PrivateDB func(path string) error
	// RecoveryKeyFile receives the cross-signing recovery key when the bot
	// sets cross-signing up (it is also kept in State).
	RecoveryKeyFile string
	// MayInvite says whose invites to room the bot accepts: those who may
	// use the bot in that room.
	MayInvite func(room, user string) bool
	// EditInterval is the least time between two edits of one message
	// (default 1.5 s: Synapse's default rate limit is 0.2/s with a burst of 10).
	EditInterval time.Duration `env:"CLAUDEOPS_MATRIX_EDIT_INTERVAL" envDefault:"1500ms"`
	// FinalHold is how long a text's final edit waits for the turn's
	// footer to ride in it (default outbox.FinalHold; tests lengthen it
	// to count the events whatever the machine's load).
	FinalHold time.Duration
	// TimelineLimit is how many events of a room one sync returns (default
	// 100); more are fetched page by page (see backfill).
	TimelineLimit int
	State         State
	HTTPClient    *http.Client
	Logger        *slog.Logger
	Now           func() time.Time
}

// Adapter is the Matrix adapter. Create it with New, then Run it.
type Adapter struct {
	// mailroom carries the bot's calls to Matrix: Post, Edit, UpdatePrompt
	// and SetStatus queue and return, Ask and PostFile wait their turn
	// (outbox.Mailroom). Its methods are the adapter's; the calls it
	// makes are direct's, which wait on the platform.
	*mailroom
	cfg Config
	log *slog.Logger
	cli *mautrix.Client
	me  id.UserID
	cur *cursor
	ed  *outbox.Editor[matrixEdit]

	ready     chan struct{} // closed once connected
	connectMu sync.Mutex

	mu          sync.Mutex
	deliver     func(context.Context, adapters.Event) error
	displayName string
	encrypted   bool // the crypto machine runs
	// What the adapter remembers of what it posted, bounded (the least
	// recently used go first): text messages by their first event id, the
	// latest event per thread (reply fallbacks), the open tool status
	// message per thread, tool line refs.
	posts    *outbox.Registry[string, *post]
	latest   *outbox.Registry[adapters.ThreadKey, id.EventID]
	statuses *outbox.Registry[adapters.ThreadKey, *statusMsg]
	toolRefs *outbox.Registry[string, toolRef]
	prompts  map[id.EventID]*promptMsg // prompt and poll events; closed ones pruned
	reported map[string]bool           // undecryptable sessions already reported
	direct   map[id.RoomID]bool
	encRooms map[id.RoomID]bool            // rooms known encrypted or not (trust.go)
	typing   map[id.RoomID]map[string]bool // threads with a turn running, per room
	typers   map[id.RoomID]chan struct{}   // the running typer of a room, woken by SetStatus

	upload uploadLimit // the homeserver's, as last asked (sendfile.go)

	closing     chan struct{} // closed by Close: background work ends
	closeOnce   sync.Once
	wg          sync.WaitGroup
	closeCrypto func()

	conn *adapters.ConnTracker // the sync loop's link (conn.go)
}

// New validates the configuration; it does no I/O.
func New(cfg Config) (*Adapter, error) {
	switch {
	case cfg.Homeserver == "":
		return nil, errors.New("matrix: MATRIX_HOMESERVER is required")
	case cfg.UserID == "":
		return nil, errors.New("matrix: MATRIX_USER_ID is required")
	case cfg.AccessToken == "" && cfg.Password == "":
		return nil, errors.New("matrix: set MATRIX_ACCESS_TOKEN (with MATRIX_DEVICE_ID) or MATRIX_PASSWORD")
	case cfg.State == nil:
		return nil, errors.New("matrix: no state store")
	}
	if _, _, err := id.UserID(cfg.UserID).Parse(); err != nil {
		return nil, fmt.Errorf("matrix: MATRIX_USER_ID %q is not a user id like @bot:example.org: %w", cfg.UserID, err)
	}
	if cfg.MayInvite == nil {
		cfg.MayInvite = func(string, string) bool { return false }
	}
	if cfg.EditInterval <= 0 {
		cfg.EditInterval = 1500 * time.Millisecond
	}
	if cfg.FinalHold <= 0 {
		cfg.FinalHold = outbox.FinalHold
	}
	if cfg.TimelineLimit <= 0 {
		cfg.TimelineLimit = 100
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
	}
	cli, err := mautrix.NewClient(cfg.Homeserver, id.UserID(cfg.UserID), "")
	if err != nil {
		return nil, fmt.Errorf("matrix: MATRIX_HOMESERVER %q: %w", cfg.Homeserver, err)
	}
	cli.Client = cfg.HTTPClient
	cli.DefaultHTTPRetries = httpRetries
	a := &Adapter{
		cfg:      cfg,
		log:      cfg.Logger.With("adapter", Platform),
		cli:      cli,
		me:       id.UserID(cfg.UserID),
		ready:    make(chan struct{}),
		posts:    outbox.NewRegistry[string, *post](maxTracked, 0, cfg.Now),
		latest:   outbox.NewRegistry[adapters.ThreadKey, id.EventID](maxTracked, 0, cfg.Now),
		statuses: outbox.NewRegistry[adapters.ThreadKey, *statusMsg](maxTracked, 0, cfg.Now),
		toolRefs: outbox.NewRegistry[string, toolRef](maxTracked, 0, cfg.Now),
		prompts:  make(map[id.EventID]*promptMsg),
		reported: make(map[string]bool),
		direct:   make(map[id.RoomID]bool),
		encRooms: make(map[id.RoomID]bool),
		typing:   make(map[id.RoomID]map[string]bool),
		typers:   make(map[id.RoomID]chan struct{}),
		closing:  make(chan struct{}),
		conn:     adapters.NewConnTracker("sync", cfg.Now),
	}
	a.cur = &cursor{state: cfg.State, account: cfg.UserID, now: cfg.Now}
	cli.Store = a.cur
	a.ed = newEditor(a)
	a.mailroom = outbox.NewMailroom((*direct)(a), a.log)
	return a, nil
}

// Name implements adapters.Adapter.
func (a *Adapter) Name() string { return Platform }

// Close makes what the bot queued, sends the edits still pending (each
// for at most 30 s), clears the
// typing notices it showed, and closes the crypto store. Call it after the
// bot has shut down.
func (a *Adapter) Close() {
	a.mailroom.CloseWithin(closeDrain)
	a.closeOnce.Do(func() {
		a.mu.Lock() // SetStatus starts no typer after this
		close(a.closing)
		a.mu.Unlock()
	})
	a.wg.Wait()
	a.ed.Close()
	a.mu.Lock()
	closeCrypto := a.closeCrypto
	a.closeCrypto = nil
	a.mu.Unlock()
	if closeCrypto != nil {
		closeCrypto()
	}
}

// Connect logs in (or reuses the stored login) and sets up encryption; it
// does not sync yet. Call it before the bot's Recover, which edits prompts
// left open by a previous run; Run calls it if it was not called.
func (a *Adapter) Connect(ctx context.Context) error {
	a.connectMu.Lock()
	defer a.connectMu.Unlock()
	select {
	case <-a.ready:
		return nil
	default:
	}
	// A homeserver that is down or misnamed at start fails at once, not
	// after a minute of retries; once connected, requests are retried.
	a.cli.DefaultHTTPRetries = 0
	acct, err := a.login(ctx)
	if err != nil {
		return err
	}
	if resp, err := a.cli.GetOwnDisplayName(ctx); err == nil {
		a.mu.Lock()
		a.displayName = resp.DisplayName
		a.mu.Unlock()
	}
	syncer := mautrix.NewDefaultSyncer()
	syncer.FilterJSON = &mautrix.Filter{Room: &mautrix.RoomFilter{Timeline: &mautrix.FilterPart{Limit: a.cfg.TimelineLimit}}}
	syncer.OnSync(a.dropHistory)
	a.cli.Syncer = &trackingSyncer{DefaultSyncer: syncer, cur: a.cur, conn: a.conn}
	a.register(syncer)
	if err := a.setupCrypto(ctx, acct); err != nil {
		return err
	}
	a.cli.DefaultHTTPRetries = httpRetries // before anything else may send
	close(a.ready)
	a.log.Info("matrix: connected", "user", a.me, "device", a.cli.DeviceID, "encryption", a.encrypted)
	return nil
}

// Run connects (see Connect) and syncs until ctx ends, delivering events
// to the bot. A sync that fails is retried from the last position whose
// events were all delivered.
func (a *Adapter) Run(ctx context.Context, deliver func(context.Context, adapters.Event) error) error {
	a.mu.Lock()
	a.deliver = deliver
	a.mu.Unlock()
	if err := a.Connect(ctx); err != nil {
		a.conn.Set(adapters.Disconnected, err)
		return err
	}
	defer a.conn.Set(adapters.Disconnected, nil) // stopped

	backoff := time.Second
	for {
		began := time.Now()
		err := a.cli.SyncWithContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		a.conn.Set(adapters.Disconnected, err)
		if time.Since(began) > 5*time.Minute {
			backoff = time.Second // it had been working: a new problem
		}
		if errors.Is(err, mautrix.MUnknownToken) {
			return fmt.Errorf("matrix: the access token was refused (log in again): %w", err)
		}
		a.log.Warn("matrix: sync stopped; resuming from the last delivered position", "err", err, "in", backoff)
		a.cur.rewind()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// login returns the account record in use: the configured token, the
// stored login, or a fresh password login (stored for the next start).
func (a *Adapter) login(ctx context.Context) (Login, error) {
	acct, _, err := a.cfg.State.Login(ctx, a.cfg.UserID)
	if err != nil {
		return acct, fmt.Errorf("matrix: load the stored login: %w", err)
	}
	if acct.PickleKey == "" {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		acct.PickleKey = hex.EncodeToString(k)
	}
	switch {
	case a.cfg.AccessToken != "":
		if acct.AccessToken != a.cfg.AccessToken {
			acct.DeviceID = "" // another login: its device may differ
		}
		acct.AccessToken = a.cfg.AccessToken
		if a.cfg.DeviceID != "" {
			acct.DeviceID = a.cfg.DeviceID
		}
	case acct.AccessToken != "" && acct.Homeserver == a.cfg.Homeserver:
		// The stored password login: its device owns the crypto state.
	default:
		if err := a.passwordLogin(ctx, &acct); err != nil {
			return acct, err
		}
	}
	a.cli.AccessToken = acct.AccessToken
	who, err := a.cli.Whoami(ctx)
	if errors.Is(err, mautrix.MUnknownToken) && a.cfg.AccessToken == "" && a.cfg.Password != "" {
		// The stored login was revoked (a logout, a password change): that
		// device is gone, and its crypto state with it. Log in as a new
		// device; setupCrypto starts its crypto state afresh and signs it
		// with the kept recovery key.
		a.log.Warn("matrix: the stored login was refused; logging in again as a new device", "old_device", acct.DeviceID)
		a.retireCryptoDB(acct.DeviceID)
		acct.DeviceID = ""
		if err := a.passwordLogin(ctx, &acct); err != nil {
			return acct, err
		}
		a.cli.AccessToken = acct.AccessToken
		who, err = a.cli.Whoami(ctx)
	}
	if err != nil {
		return acct, fmt.Errorf("matrix: check the login (whoami): %w", err)
	}
	if who.UserID != a.me {
		return acct, fmt.Errorf("matrix: the access token belongs to %s, not MATRIX_USER_ID %s", who.UserID, a.me)
	}
	switch {
	case acct.DeviceID == "":
		acct.DeviceID = who.DeviceID.String()
	case who.DeviceID != "" && who.DeviceID.String() != acct.DeviceID:
		return acct, fmt.Errorf("matrix: MATRIX_DEVICE_ID %s is not the access token's device (%s)", acct.DeviceID, who.DeviceID)
	}
	a.cli.DeviceID = id.DeviceID(acct.DeviceID)
	acct.Homeserver = a.cfg.Homeserver
	acct.UpdatedAt = a.cfg.Now()
	if err := a.cfg.State.SaveLogin(ctx, a.cfg.UserID, acct); err != nil {
		return acct, fmt.Errorf("matrix: store the login: %w", err)
	}
	return acct, nil
}

// passwordLogin logs in with MATRIX_PASSWORD, on acct's device if it has one.
func (a *Adapter) passwordLogin(ctx context.Context, acct *Login) error {
	resp, err := a.cli.Login(ctx, &mautrix.ReqLogin{
		Type:                     mautrix.AuthTypePassword,
		Identifier:               mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: a.cfg.UserID},
		Password:                 a.cfg.Password,
		DeviceID:                 id.DeviceID(acct.DeviceID),
		InitialDeviceDisplayName: "claudeops",
	})
	if err != nil {
		return fmt.Errorf("matrix: password login as %s: %w", a.cfg.UserID, err)
	}
	acct.AccessToken, acct.DeviceID = resp.AccessToken, resp.DeviceID.String()
	return nil
}

// retireCryptoDB moves the crypto state of a device that no longer exists
// aside (kept, not deleted: it holds the keys of past messages).
func (a *Adapter) retireCryptoDB(device string) {
	if a.cfg.CryptoDB == "" {
		return
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		from := a.cfg.CryptoDB + suffix
		if _, err := os.Stat(from); err != nil {
			continue
		}
		to := strings.TrimSuffix(a.cfg.CryptoDB, ".db") + ".retired-" + device + ".db" + suffix
		if err := os.Rename(from, to); err != nil {
			a.log.Error("matrix: move the old crypto state aside", "from", from, "err", err)
		} else if suffix == "" {
			a.log.Warn("matrix: the old device's crypto state was moved aside", "file", to)
		}
	}
}

func (a *Adapter) identity() (deliver func(context.Context, adapters.Event) error, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.deliver, a.displayName
}

// deliverEvent hands one event to the bot; a failure keeps the sync
// position where it is, so the event comes again.
func (a *Adapter) deliverEvent(ctx context.Context, evID id.EventID, ev adapters.Event) {
	deliver, _ := a.identity()
	if deliver == nil {
		return
	}
	if err := deliver(ctx, ev); err != nil {
		a.cur.failed()
		a.log.Log(ctx, adapters.DeliverLevel(err), "matrix: event not recorded; it will be synced again", "event", evID, "err", err)
	}
}

// threadRef is the ThreadRef of the thread rooted at root in room.
func threadRef(room id.RoomID, root id.EventID) adapters.ThreadRef {
	return adapters.ThreadRef{Platform: Platform, Channel: room.String(), Thread: root.String()}
}

// cleanKey normalises a reaction key: no variation selectors.
func cleanKey(k string) string { return strings.ReplaceAll(k, "\ufe0f", "") }

// eventStablePollResponse is MSC3381's stable name, which newer clients
// may send; mautrix knows only the unstable one.
var eventStablePollResponse = event.Type{Type: "m.poll.response", Class: event.MessageEventType}
