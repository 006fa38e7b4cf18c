package slack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// lastToolResult is what the model last got back from a tool.
func lastToolResult(h *harness) string {
	reqs := h.api.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if trs := reqs[i].ToolResults(); len(trs) > 0 {
			return trs[0].Content
		}
	}
	return ""
}

func (h *harness) waitQuestion(threadTS string) fakeslack.Message {
	h.t.Helper()
	var found fakeslack.Message
	if !h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Thread(general, threadTS) {
			if m.BotID != "" && strings.Contains(m.VisibleText(), "Which one?") && len(m.ActionIDs()) > 0 {
				found = m
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no question in thread:\n%s", h.dump(threadTS))
	}
	return found
}

func TestQuestionsByButtonSelectAndCheckboxes(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)

	// ≤ 5 options: buttons.
	ts := h.fs.Post(alice, general, mention+"ask one")
	q := h.waitQuestion(ts)
	if err := h.fs.Click(alice, general, q.TS, "claudeops_answer_0_2"); err != nil {
		t.Fatalf("click: %v (actions %v)", err, q.ActionIDs())
	}
	h.waitThread(ts, `Answered by `+alice+`: Blue`)
	h.waitThread(ts, `tool result: .*"Which one\?"="Blue"`)
	h.waitThread(ts, `✓ .* turns?$`)

	// (More than 5 options would be a select; the CLI allows at most 4,
	// so TestQuestionSelect covers that with the adapter alone.)

	// Multi-select: checkboxes, then Submit.
	h.fs.Reply(alice, general, ts, "ask multi")
	var q3 fakeslack.Message
	h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Thread(general, ts) {
			if m.BotID != "" && strings.Contains(strings.Join(m.ActionIDs(), ","), "claudeops_check_0") {
				q3 = m
				return true
			}
		}
		return false
	})
	if q3.TS == "" {
		t.Fatalf("no checkbox question:\n%s", h.dump(ts))
	}
	if err := h.fs.Check(alice, general, q3.TS, "claudeops_check_0", []string{"1", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := h.fs.Click(alice, general, q3.TS, "claudeops_submit"); err != nil {
		t.Fatal(err)
	}
	h.waitThread(ts, `Answered by `+alice+`: Logging, Tracing`)
	h.waitThread(ts, `tool result: .*"Which one\?"="Logging, Tracing"`)
	h.noViolations()
}

func TestStopButton(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			hold := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(hold) }) })
			h := newHarness(t, script(hold), fakeslack.Options{Streaming: streaming}, nil)
			ts := h.fs.Post(alice, general, mention+"slow please")
			h.waitThread(ts, `slow answe`)
			// The Stop button: on the live message, or beside a native stream.
			var stop fakeslack.Message
			if !h.fs.WaitFor(wait, func() bool {
				for _, m := range h.fs.Thread(general, ts) {
					if m.BotID != "" && strings.Contains(strings.Join(m.ActionIDs(), ","), "claudeops_stop") {
						stop = m
						return true
					}
				}
				return false
			}) {
				t.Fatalf("no Stop button:\n%s", h.dump(ts))
			}
			if err := h.fs.Click(alice, general, stop.TS, "claudeops_stop"); err != nil {
				t.Fatalf("click stop: %v", err)
			}
			h.waitThread(ts, `■ Stopped`)
			if !h.fs.WaitFor(wait, func() bool {
				for _, m := range h.fs.Thread(general, ts) {
					if m.BotID != "" && strings.Contains(strings.Join(m.ActionIDs(), ","), "claudeops_stop") {
						return false
					}
				}
				return true
			}) {
				t.Errorf("Stop button left after the turn:\n%s", h.dump(ts))
			}
			if streamed := len(h.fs.Calls("chat.startStream")) > 0; streamed != streaming {
				t.Errorf("native stream used: %v, want %v", streamed, streaming)
			}
			h.noViolations()
		})
	}
}

func TestRedeliveredEventIsOneTurn(t *testing.T) {
	// Events are not acked in time: Slack delivers them again (same
	// event_id, new envelope). Each post is still one turn.
	h := newHarness(t, script(nil), fakeslack.Options{AckTimeout: 50 * time.Millisecond}, nil)
	ts := h.fs.Post(alice, general, mention+"count me once")
	h.waitThread(ts, `ok: count me once`)
	h.waitThread(ts, `✓ .* turns?$`)
	// Let redeliveries arrive: how many Slack makes is its own affair
	// (each envelope not acked within AckTimeout), so no count to await.
	time.Sleep(200 * time.Millisecond)
	n := 0
	for _, r := range h.api.Requests() {
		if strings.Contains(r.LastUserText(), "count me once") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("model saw the post %d times", n)
	}
	replies := 0
	for _, m := range h.fs.Thread(general, ts) {
		if m.BotID != "" && strings.Contains(m.VisibleText(), "ok: count me once") {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d replies", replies)
	}
}

func TestDroppedSocketMidTurnLosesNothing(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h := newHarness(t, script(hold), fakeslack.Options{}, nil)
	ts := h.fs.Post(alice, general, mention+"slow answer please")
	h.waitThread(ts, `slow answe`)
	h.fs.DropSockets()
	h.fs.Disconnect("refresh_requested")
	if !h.fs.WaitConnections(1, wait) {
		t.Fatal("no reconnect")
	}
	// A message sent while reconnecting is not lost either.
	h.fs.Reply(alice, general, ts, "and this one")
	release()
	h.waitThread(ts, `slow answer that takes a while (more ){20}`)
	h.waitThread(ts, `ok: .*and this one`)
}

func TestHTTPModeSignatures(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	srv := httptest.NewServer(h.ad.HTTPHandler())
	defer srv.Close()
	url := srv.URL + "/slack/events"
	if err := h.fs.VerifyURL(url); err != nil {
		t.Fatalf("url_verification: %v", err)
	}
	event := func(id, ts, text string) []byte {
		b, _ := json.Marshal(map[string]any{
			"token": "x", "team_id": "T0FAKETEAM", "api_app_id": "A0FAKEAPP1", "type": "event_callback",
			"event_id": id, "event_time": time.Now().Unix(),
			"event": map[string]any{"type": "app_mention", "user": alice, "text": mention + text, "ts": ts, "channel": general, "event_ts": ts},
		})
		return b
	}
	cases := []struct {
		name string
		opts []fakeslack.HTTPOpt
		want int
	}{
		{"bad signature", []fakeslack.HTTPOpt{fakeslack.BadSignature()}, http.StatusUnauthorized},
		{"stale timestamp", []fakeslack.HTTPOpt{fakeslack.StaleTimestamp()}, http.StatusUnauthorized},
		{"no signature", []fakeslack.HTTPOpt{fakeslack.NoSignature()}, http.StatusUnauthorized},
		{"valid", nil, http.StatusOK},
	}
	var validTS string
	for i, c := range cases {
		// The post exists in the channel (without a mention, so Socket Mode
		// ignores it); the mention event for it comes over HTTP.
		ts := h.fs.Post(alice, general, "about to mention over http "+c.name)
		if c.want == http.StatusOK {
			validTS = ts
		}
		resp, err := h.fs.SendHTTP(url, "events_api", event(fmt.Sprintf("Ev%d", i), ts, "via http "+c.name), c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	h.waitThread(validTS, `ok: via http valid`)
	for _, r := range h.api.Requests() {
		if strings.Contains(r.LastUserText(), "via http") && !strings.Contains(r.LastUserText(), "valid") {
			t.Errorf("an unsigned delivery reached Claude: %q", r.LastUserText())
		}
	}
	_ = context.Background()
}

// TestQuestionSelect: a question with more options than buttons fit is a
// static select; choosing one is an answer event. (The real CLI caps options
// at 4, so this drives the adapter directly.)
func TestQuestionSelect(t *testing.T) {
	s := newSolo(t)
	th := s.thread()
	q := adapters.Question{Text: "Which region?", Header: "Region"}
	for i := 1; i <= 7; i++ {
		q.Options = append(q.Options, adapters.Option{Label: fmt.Sprintf("region-%d", i)})
	}
	ref, err := s.ad.Direct().Ask(t.Context(), th, adapters.Prompt{ID: "p1", Kind: adapters.PromptQuestion, Questions: []adapters.Question{q}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.fs.Select(alice, general, ref.ID, "claudeops_select_0", "6"); err != nil {
		t.Fatal(err)
	}
	ev := s.nextAction()
	if ev.Click.PromptID != "p1" || ev.Click.Choice != adapters.ChoiceAnswer || len(ev.Click.Answers) != 1 || ev.Click.Answers[0] != "6" || ev.User.ID != alice || ev.Thread != th {
		t.Errorf("event %+v", ev)
	}
}
