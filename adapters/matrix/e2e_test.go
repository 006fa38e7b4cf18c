package matrix_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/bot/scheduled"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// End-to-end tests: people on a real Dendrite, the bot with the Matrix
// adapter, the real Claude Code CLI, the fake model API.

const wait = 90 * time.Second

type harness struct {
	t       testing.TB
	srv     *dendrite.Server
	api     *fakeanthropic.Server
	botUser *dendrite.User
	dir     string // the sessions' working directory
	dbPath  string
	home    string
	bin     string
	mod     func(*bot.Config, *matrix.Config)

	st   *store.Store
	b    *bot.Bot
	ad   *matrix.Adapter
	stop func()

	alice, bob, mallory *dendrite.Client
}

type options struct {
	crypto bool
	script fakeanthropic.Script
	mod    func(*bot.Config, *matrix.Config)
}

func newHarness(t testing.TB, o options) *harness {
	t.Helper()
	bin := testcli.Bin(t)
	srv := dendrite.Start(t)
	if o.script == nil {
		o.script = script(nil)
	}
	h := &harness{t: t, srv: srv, bin: bin, dir: t.TempDir(), home: t.TempDir(), mod: o.mod}
	h.dbPath = filepath.Join(t.TempDir(), "claudeops.db")
	h.api = fakeanthropic.Start(t, o.script)
	h.botUser = srv.Register(t, "claude")
	copts := dendrite.ClientOptions{Crypto: o.crypto}
	h.alice = srv.Client(t, srv.Register(t, "alice"), copts)
	h.bob = srv.Client(t, srv.Register(t, "bob"), copts)
	h.mallory = srv.Client(t, srv.Register(t, "mallory"), copts)
	h.start()
	t.Cleanup(func() { h.stop() })
	return h
}

// start runs the bot and its adapter on the harness's database.
func (h *harness) start() {
	h.t.Helper()
	st, err := store.Open(context.Background(), h.dbPath)
	if err != nil {
		h.t.Fatal(err)
	}
	h.st = st
	bc := bot.Config{
		Runner:    testrunner.Runner(h.t, h.home, filepath.Dir(h.dbPath)),
		ClaudeBin: h.bin,
		Env:       testkit.CLIEnv(h.home, h.api.URL, "CLAUDE_CODE_MAX_RETRIES=1"),
		Workdir:   h.dir,
		// Globs: everyone on this server but mallory's namesakes.
		AllowedUsers: []string{"@alice:" + h.srv.ServerName, "@b*:" + h.srv.ServerName},
		MaxSessions:  4,
		StopGrace:    3 * time.Second,
		// Scheduled runs (RunScheduled) are the schedules extension's.
		Extensions: []thread.Extension{scheduled.New(scheduled.Config{})},
	}
	base := strings.TrimSuffix(h.dbPath, ".db")
	mc := matrix.Config{
		Homeserver: h.srv.URL, UserID: h.botUser.ID.String(),
		AccessToken: h.botUser.AccessToken, DeviceID: h.botUser.DeviceID.String(), Password: h.botUser.Password,
		CryptoDB: base + ".matrix-crypto.db", RecoveryKeyFile: base + ".matrix-recovery-key",
		EditInterval: 200 * time.Millisecond, State: matrix.StoreState{Store: st}, PrivateDB: store.MakePrivate,
	}
	if h.mod != nil {
		h.mod(&bc, &mc)
	}
	b := bot.New(bc, st)
	mc.MayInvite = func(room, user string) bool { return b.MayUse(matrix.Platform, room, user) }
	ad, err := matrix.New(mc)
	if err != nil {
		h.t.Fatal(err)
	}
	b.AddAdapter(ad)
	if err := ad.Connect(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	if err := b.Recover(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.b, h.ad = b, ad
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = b.Run(ctx) }()
	go func() {
		defer wg.Done()
		if err := ad.Run(ctx, b.Deliver); err != nil {
			h.t.Errorf("matrix adapter: %v", err)
		}
	}()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			ad.Close()
			st.Close()
		})
	}
}

func (h *harness) restart() {
	h.stop()
	h.start()
}

// room: alice makes a room and invites the bot (and bob), and waits until
// the bot has joined.
func (h *harness) room(encrypted bool) id.RoomID {
	h.t.Helper()
	room := h.alice.CreateRoom(dendrite.RoomOptions{Name: "ops", Encrypted: encrypted, Invite: []id.UserID{h.botUser.ID, h.bob.User.ID}})
	h.bob.Join(room)
	if !h.alice.WaitFor(wait, func() bool { return h.alice.Membership(room, h.botUser.ID) == event.MembershipJoin }) {
		h.t.Fatalf("the bot did not join %s", room)
	}
	return room
}

// mention: alice (or c) mentions the bot at top level; the thread's root.
func (h *harness) mention(c *dendrite.Client, room id.RoomID, text string) id.EventID {
	return c.SendText(room, text, h.botUser.ID, "")
}

// waitBot waits for a bot message in the thread matching pattern.
func (h *harness) waitBot(room id.RoomID, root id.EventID, pattern string) dendrite.Message {
	h.t.Helper()
	re := regexp.MustCompile(pattern)
	var found dendrite.Message
	if !h.alice.WaitFor(wait, func() bool {
		for _, m := range h.alice.Thread(room, root) {
			if m.Sender == h.botUser.ID && re.MatchString(m.Body) {
				found = m
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no bot message matching %q in thread %s:\n%s", pattern, root, h.dump(room, root))
	}
	return found
}

// footerTail is a turn's footer at the end of its final text's event: it
// rides in the text's final edit when it comes soon after (footer.go).
var footerTail = regexp.MustCompile(`\n\n[✓✗] [^\n]*$`)

// withoutFooter is body without a footer at its end.
func withoutFooter(body string) string { return footerTail.ReplaceAllString(body, "") }

func (h *harness) botMessages(room id.RoomID, root id.EventID, pattern string) []dendrite.Message {
	re := regexp.MustCompile(pattern)
	var out []dendrite.Message
	for _, m := range h.alice.Thread(room, root) {
		if m.Sender == h.botUser.ID && re.MatchString(m.Body) {
			out = append(out, m)
		}
	}
	return out
}

func (h *harness) dump(room id.RoomID, root id.EventID) string {
	var b strings.Builder
	for _, m := range h.alice.Thread(room, root) {
		fmt.Fprintf(&b, "  [%s %s %s edits=%d] %s\n", m.Sender, m.Type.Type, m.MsgType, m.Edits, strings.ReplaceAll(cut(m.Body, 300), "\n", " ⏎ "))
	}
	return b.String()
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// waitPrompt waits for an open approval prompt in the thread, other than
// skip, with the bot's reactions on it: one per choice its hint lists.
func (h *harness) waitPrompt(room id.RoomID, root, skip id.EventID) id.EventID {
	h.t.Helper()
	var prompt id.EventID
	var keys []string
	if !h.alice.WaitFor(wait, func() bool {
		for _, m := range h.alice.Thread(room, root) {
			if m.Sender == h.botUser.ID && m.ID != skip && strings.Contains(m.Body, "React ✅ allow") {
				prompt, keys = m.ID, hintKeys(m.Body)
			}
		}
		return prompt != "" && strings.Join(h.ownReactions(room, prompt), " ") == strings.Join(keys, " ")
	}) {
		h.t.Fatalf("no open approval prompt with the reactions of its choices in thread:\n%s", h.dump(room, root))
	}
	return prompt
}

// hintKeys are the reactions a prompt's "React ✅ allow · …" hint lists.
func hintKeys(body string) []string {
	_, hint, _ := strings.Cut(body, "React ")
	hint, _, _ = strings.Cut(hint, " — ")
	var keys []string
	for _, c := range strings.Split(hint, " · ") {
		k, _, _ := strings.Cut(c, " ")
		keys = append(keys, k)
	}
	return keys
}

func (h *harness) ownReactions(room id.RoomID, target id.EventID) []string {
	var keys []string
	for _, r := range h.alice.Reactions(room, target) {
		if r.Sender == h.botUser.ID {
			keys = append(keys, r.Content.AsReaction().RelatesTo.Key)
		}
	}
	return keys
}

// The model of these tests: see fakeanthropic.ChatScript.
var (
	script     = fakeanthropic.ChatScript
	longAnswer = fakeanthropic.LongAnswer
)
