package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/store"
)

const me = "@bot:example.org"

func testAdapter(t *testing.T) *Adapter {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := New(Config{Homeserver: "http://127.0.0.1:1", UserID: me, AccessToken: "tok", State: StoreState{st}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func evt(t *testing.T, js string) *event.Event {
	t.Helper()
	var e event.Event
	if err := json.Unmarshal([]byte(js), &e); err != nil {
		t.Fatal(err)
	}
	if e.StateKey == nil {
		_ = e.Content.ParseRaw(e.Type)
	}
	return &e
}

func TestDropHistory(t *testing.T) {
	a := testAdapter(t)
	msg := func(id string) *event.Event {
		return evt(t, `{"type":"m.room.message","event_id":"`+id+`","sender":"@alice:example.org","content":{"msgtype":"m.text","body":"hi"}}`)
	}
	state := evt(t, `{"type":"m.room.name","state_key":"","event_id":"$name","content":{"name":"ops"}}`)
	join := evt(t, `{"type":"m.room.member","state_key":"`+me+`","event_id":"$join","content":{"membership":"join"},"unsigned":{"prev_content":{"membership":"invite"}}}`)
	rename := evt(t, `{"type":"m.room.member","state_key":"`+me+`","event_id":"$rename","content":{"membership":"join","displayname":"B"},"unsigned":{"prev_content":{"membership":"join"}}}`)

	ids := func(evts []*event.Event) (out []string) {
		for _, e := range evts {
			out = append(out, e.ID.String())
		}
		return out
	}
	cases := []struct {
		name  string
		since string
		tl    []*event.Event
		want  []string
	}{
		{"first sync keeps state only", "", []*event.Event{msg("$old1"), state, msg("$old2")}, []string{"$name"}},
		{"after a join, what came before is history", "s1", []*event.Event{msg("$before"), join, msg("$after")}, []string{"$join", "$after"}},
		{"a profile change is not a join", "s1", []*event.Event{msg("$a"), rename, msg("$b")}, []string{"$a", "$rename", "$b"}},
		{"ordinary sync keeps all", "s1", []*event.Event{msg("$a"), msg("$b")}, []string{"$a", "$b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := &mautrix.RespSync{}
			resp.Rooms.Join = map[id.RoomID]*mautrix.SyncJoinedRoom{"!r:example.org": {Timeline: mautrix.SyncTimeline{SyncEventsList: mautrix.SyncEventsList{Events: tc.tl}}}}
			a.dropHistory(t.Context(), resp, tc.since)
			got := ids(resp.Rooms.Join["!r:example.org"].Timeline.Events)
			if len(got) != len(tc.want) {
				t.Fatalf("kept %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("kept %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestMentionsAndStripping(t *testing.T) {
	a := testAdapter(t)
	cases := []struct {
		name, content string
		mentioned     bool
		text          string
	}{
		{"element pill", `{"msgtype":"m.text","body":"Claude Bot: run the tests","format":"org.matrix.custom.html","formatted_body":"<a href=\"https://matrix.to/#/@bot:example.org\">Claude Bot</a>: run the tests","m.mentions":{"user_ids":["@bot:example.org"]}}`, true, "run the tests"},
		{"m.mentions present without us", `{"msgtype":"m.text","body":"the bot is slow; @bot:example.org too","m.mentions":{}}`, false, "the bot is slow;  too"},
		{"old client, mxid in body", `{"msgtype":"m.text","body":"@bot:example.org: status"}`, true, "status"},
		{"old client, display name prefix", `{"msgtype":"m.text","body":"claude bot: help"}`, true, "help"},
		{"old client, no mention", `{"msgtype":"m.text","body":"claude bot is great"}`, false, "claude bot is great"},
	}
	a.displayName = "Claude Bot"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := evt(t, `{"type":"m.room.message","event_id":"$e","sender":"@alice:example.org","content":`+tc.content+`}`)
			c := e.Content.AsMessage()
			if got := a.mentions(c, "Claude Bot"); got != tc.mentioned {
				t.Errorf("mentioned = %v, want %v", got, tc.mentioned)
			}
			if got := a.stripMention(c, "Claude Bot"); got != tc.text {
				t.Errorf("text = %q, want %q", got, tc.text)
			}
		})
	}
}

func TestPromptClicks(t *testing.T) {
	th := adapters.ThreadRef{Platform: Platform, Channel: "!r", Thread: "$root"}
	all := &promptMsg{id: "p1", kind: adapters.PromptApproval, thread: th, event: "$prompt", keycapQ: -1,
		choices: []adapters.ChoiceID{adapters.ChoiceAllow, adapters.ChoiceAllowThread, adapters.ChoiceAllowFolder, adapters.ChoiceAllowAlways, adapters.ChoiceDeny}}
	for key, want := range map[string]adapters.ChoiceID{"✅": adapters.ChoiceAllow, "🧵": adapters.ChoiceAllowThread, "📂": adapters.ChoiceAllowFolder, "♾️": adapters.ChoiceAllowAlways, "♾": adapters.ChoiceAllowAlways, "❌": adapters.ChoiceDeny} {
		ev, ok := all.reactionClick(cleanKey(key), "$prompt")
		if !ok || ev.Choice != want || ev.PromptID != "p1" {
			t.Errorf("%s: %+v %v, want %s", key, ev, ok, want)
		}
	}
	if _, ok := all.reactionClick("👍", "$prompt"); ok {
		t.Error("an unrelated reaction is not a click")
	}
	// Only the reactions of the choices offered count.
	some := &promptMsg{id: "p2", kind: adapters.PromptApproval, thread: th, event: "$prompt", keycapQ: -1,
		choices: []adapters.ChoiceID{adapters.ChoiceAllow, adapters.ChoiceDeny}}
	for key, want := range map[string]adapters.ChoiceID{"✅": adapters.ChoiceAllow, "❌": adapters.ChoiceDeny, "🧵": "", "📂": "", "♾️": ""} {
		ev, ok := some.reactionClick(cleanKey(key), "$prompt")
		if ok != (want != "") || ok && ev.Choice != want {
			t.Errorf("%s on a prompt offering allow and deny: %+v %v, want %q", key, ev, ok, want)
		}
	}
	q := &promptMsg{id: "q1", kind: adapters.PromptQuestion, thread: th, event: "$prompt", nq: 2, keycapQ: 0, polls: map[id.EventID]int{"$poll2": 1}}
	ev, ok := q.reactionClick(cleanKey("2️⃣"), "$prompt")
	if !ok || ev.Choice != adapters.ChoiceAnswer || len(ev.Answers) != 2 || ev.Answers[0] != "2" || ev.Answers[1] != "" {
		t.Errorf("keycap: %+v %v", ev, ok)
	}
	ev, ok = q.voteClick("$poll2", []string{"o3"})
	if !ok || ev.Answers[1] != "3" || ev.Answers[0] != "" {
		t.Errorf("vote: %+v %v", ev, ok)
	}
	if _, ok := q.voteClick("$other", []string{"o1"}); ok {
		t.Error("a vote in another poll is not an answer")
	}
}

// memState counts cursor saves and can fail them.
type memState struct {
	StoreState
	fail bool
}

func (m *memState) SaveSyncPosition(ctx context.Context, user string, p SyncPosition) error {
	if m.fail {
		return errors.New("disk full")
	}
	return m.StoreState.SaveSyncPosition(ctx, user, p)
}

func TestCursorPersistsOnlyDeliveredPositions(t *testing.T) {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms := &memState{StoreState: StoreState{st}}
	c := &cursor{state: ms, account: me, now: time.Now}
	ctx := t.Context()
	durable := func() string {
		sc, _ := st.SyncCursor(ctx, Platform, me)
		return sc.NextBatch
	}
	if tok, _ := c.LoadNextBatch(ctx, ""); tok != "" {
		t.Fatalf("fresh cursor at %q", tok)
	}
	_ = c.SaveNextBatch(ctx, "", "s1")
	if durable() != "" {
		t.Fatal("saved before the response was processed")
	}
	if err := c.commit(ctx, "s1"); err != nil || durable() != "s1" {
		t.Fatalf("commit: %v, durable %q", err, durable())
	}
	_ = c.SaveNextBatch(ctx, "", "s2")
	c.failed()
	if err := c.commit(ctx, "s2"); err == nil || durable() != "s1" {
		t.Fatalf("a failed delivery must keep s1: %v, %q", err, durable())
	}
	c.rewind()
	if tok, _ := c.LoadNextBatch(ctx, ""); tok != "s1" {
		t.Errorf("after rewind syncing from %q, want s1", tok)
	}
	_ = c.SaveNextBatch(ctx, "", "s2")
	ms.fail = true
	if err := c.commit(ctx, "s2"); err == nil {
		t.Error("a store failure must stop the sync")
	}
}
