package fakeslack

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// historyThread makes a thread in #general: alice's parent, then replies by
// bob, the bot, another bot, an edited one and a deleted one; it returns
// the parent's ts and the live replies' ts in order.
func historyThread(t *testing.T, srv *Server, api *slack.Client) (string, []string) {
	t.Helper()
	parent := srv.Post(alice, general, "<@U0FAKEBOT1> start")
	r1 := srv.Reply(bob, general, parent, "first reply")
	_, r2, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("the bot answers", false))
	if err != nil {
		t.Fatal(err)
	}
	r3 := srv.BotPost(OtherBot{BotID: "B0OTHER001", UserID: "U0OTHERBOT", AppID: "A0OTHER001", Name: "otherbot"}, general, parent, "another app")
	r4 := srv.Reply(alice, general, parent, "typo")
	if err := srv.EditMessage(alice, general, r4, "fixed"); err != nil {
		t.Fatal(err)
	}
	gone := srv.Reply(alice, general, parent, "deleted later")
	if err := srv.DeleteMessage(alice, general, gone); err != nil {
		t.Fatal(err)
	}
	r5 := srv.Reply(alice, general, parent, "last")
	return parent, []string{r1, r2, r3, r4, r5}
}

// pageAll follows next_cursor from the first page of method with form,
// returning every page's messages (raw JSON objects) and the cursors seen.
func pageAll(t *testing.T, srv *Server, method string, form url.Values) (pages [][]map[string]any, cursors []string) {
	t.Helper()
	for range 50 {
		_, body := rawCall(t, srv, method, form)
		var resp struct {
			OK       bool             `json:"ok"`
			Error    string           `json:"error"`
			HasMore  bool             `json:"has_more"`
			Messages []map[string]any `json:"messages"`
			Meta     struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"response_metadata"`
		}
		if err := json.Unmarshal(body, &resp); err != nil || !resp.OK || resp.Meta.NextCursor == nil {
			t.Fatalf("%s %v: %s (%v)", method, form, body, err)
		}
		pages = append(pages, resp.Messages)
		if resp.HasMore != (*resp.Meta.NextCursor != "") {
			t.Fatalf("has_more %v with next_cursor %q", resp.HasMore, *resp.Meta.NextCursor)
		}
		if !resp.HasMore {
			return pages, cursors
		}
		cursors = append(cursors, *resp.Meta.NextCursor)
		form.Set("cursor", *resp.Meta.NextCursor)
	}
	t.Fatal("more than 50 pages")
	return nil, nil
}

func tsList(msgs []map[string]any) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m["ts"].(string))
	}
	return out
}

func TestConversationsRepliesShapesAndPaging(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	parent, replies := historyThread(t, srv, api)

	// Two per page: the parent heads the first page and no other.
	pages, cursors := pageAll(t, srv, "conversations.replies", url.Values{"channel": {general}, "ts": {parent}, "limit": {"2"}})
	if len(pages) != 3 || len(pages[0]) != 2 || pages[0][0]["ts"] != parent {
		t.Fatalf("pages = %v", pages)
	}
	var got []string
	for _, p := range pages {
		got = append(got, tsList(p)...)
	}
	if want := append([]string{parent}, replies...); !slices.Equal(got, want) {
		t.Errorf("replies over the pages = %v, want %v (deleted one left out)", got, want)
	}
	for _, c := range cursors {
		// Opaque to the client, but Slack's look: base64 of next_ts:<ts>.
		b, err := base64.StdEncoding.DecodeString(c)
		if err != nil || !strings.HasPrefix(string(b), "next_ts:") {
			t.Errorf("cursor %q decodes to %q, %v", c, b, err)
		}
	}
	all := slices.Concat(pages...)
	byTS := map[string]map[string]any{}
	for _, m := range all {
		byTS[m["ts"].(string)] = m
	}
	checks := []struct {
		ts, what string
		ok       func(m map[string]any) bool
	}{
		{parent, "parent: thread_ts = ts, reply_count, blocks, user", func(m map[string]any) bool {
			return m["thread_ts"] == parent && m["reply_count"] == float64(5) && m["user"] == alice && m["blocks"] != nil
		}},
		{replies[0], "reply: thread_ts, parent_user_id, user", func(m map[string]any) bool {
			return m["thread_ts"] == parent && m["parent_user_id"] == alice && m["user"] == bob && m["bot_id"] == nil
		}},
		{replies[1], "our bot's: bot_id, bot_profile, no subtype", func(m map[string]any) bool {
			return m["bot_id"] == "B0FAKEBOT1" && m["bot_profile"] != nil && m["subtype"] == nil && m["user"] == "U0FAKEBOT1"
		}},
		{replies[2], "another app's: its bot_id and user", func(m map[string]any) bool {
			return m["bot_id"] == "B0OTHER001" && m["user"] == "U0OTHERBOT" && m["subtype"] == nil
		}},
		{replies[3], "edited: edited{user,ts}, new text", func(m map[string]any) bool {
			e, _ := m["edited"].(map[string]any)
			return m["text"] == "fixed" && e["user"] == alice && e["ts"] != nil
		}},
	}
	for _, c := range checks {
		if m := byTS[c.ts]; m == nil || !c.ok(m) {
			t.Errorf("%s: %v", c.what, m)
		}
	}

	// oldest/latest bound the replies (exclusive unless inclusive); the
	// parent still heads the page.
	ranges := []struct {
		name string
		form url.Values
		want []string
	}{
		{"after r1", url.Values{"oldest": {replies[0]}}, append([]string{parent}, replies[1:]...)},
		{"from r1 inclusive", url.Values{"oldest": {replies[0]}, "inclusive": {"1"}}, append([]string{parent}, replies...)},
		{"up to r3", url.Values{"latest": {replies[2]}}, append([]string{parent}, replies[:2]...)},
		{"r2..r4 inclusive", url.Values{"oldest": {replies[1]}, "latest": {replies[3]}, "inclusive": {"true"}}, append([]string{parent}, replies[1:4]...)},
		{"whole seconds", url.Values{"oldest": {"0"}}, append([]string{parent}, replies...)},
	}
	for _, r := range ranges {
		r.form.Set("channel", general)
		r.form.Set("ts", replies[2]) // any message of the thread names it
		pages, _ := pageAll(t, srv, "conversations.replies", r.form)
		if got := tsList(slices.Concat(pages...)); !slices.Equal(got, r.want) {
			t.Errorf("%s: %v, want %v", r.name, got, r.want)
		}
	}

	// slack-go reads what the fake sends.
	msgs, hasMore, next, err := api.GetConversationRepliesContext(context.Background(), &slack.GetConversationRepliesParameters{
		ChannelID: general, Timestamp: parent, Limit: 3})
	if err != nil || !hasMore || next == "" || len(msgs) != 3 || msgs[2].BotID != "B0FAKEBOT1" {
		t.Fatalf("slack-go: %d messages, has_more %v, cursor %q, %v", len(msgs), hasMore, next, err)
	}
	noViolations(t, srv)
}

func TestConversationsHistoryShapesAndPaging(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	parent, _ := historyThread(t, srv, api)
	chatter := srv.Post(bob, general, "lunch?")
	broadcast := func() string {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		m := srv.postAsUserLocked(alice, srv.channels[general], parent, "shared to the channel too")
		m.subtype = "thread_broadcast"
		return m.ts
	}()
	gone := srv.Post(bob, general, "oops")
	if err := srv.DeleteMessage(bob, general, gone); err != nil {
		t.Fatal(err)
	}
	last := srv.Post(alice, general, "<@U0FAKEBOT1> again")

	pages, _ := pageAll(t, srv, "conversations.history", url.Values{"channel": {general}, "limit": {"2"}})
	got := tsList(slices.Concat(pages...))
	// Newest first; replies left out but the broadcast; deleted left out.
	if want := []string{last, broadcast, chatter, parent}; !slices.Equal(got, want) {
		t.Errorf("history = %v, want %v", got, want)
	}
	if len(pages) != 2 {
		t.Errorf("%d pages, want 2", len(pages))
	}
	_, body := rawCall(t, srv, "conversations.history", url.Values{"channel": {general}, "oldest": {chatter}})
	var resp map[string]any
	_ = json.Unmarshal(body, &resp)
	msgs, _ := resp["messages"].([]any)
	if resp["pin_count"] == nil || len(msgs) != 2 || msgs[0].(map[string]any)["ts"] != last {
		t.Errorf("history after chatter: %s", body)
	}
	if b := msgs[1].(map[string]any); b["subtype"] != "thread_broadcast" || b["thread_ts"] != parent {
		t.Errorf("broadcast = %v", b)
	}
	h, err := api.GetConversationHistoryContext(context.Background(), &slack.GetConversationHistoryParameters{
		ChannelID: general, Latest: chatter, Inclusive: true, Limit: 1})
	if err != nil || !h.HasMore || len(h.Messages) != 1 || h.Messages[0].Timestamp != chatter || h.ResponseMetaData.NextCursor == "" {
		t.Fatalf("slack-go history = %+v, %v", h, err)
	}
	h, err = api.GetConversationHistoryContext(context.Background(), &slack.GetConversationHistoryParameters{
		ChannelID: general, Latest: chatter, Inclusive: true, Limit: 1, Cursor: h.ResponseMetaData.NextCursor})
	if err != nil || h.HasMore || len(h.Messages) != 1 || h.Messages[0].Timestamp != parent || h.Messages[0].ReplyCount != 6 {
		t.Fatalf("slack-go history, page 2 = %+v, %v", h, err)
	}
	noViolations(t, srv)
}

func TestConversationsReadErrors(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	srv.AddChannel(Channel{ID: "C0NOTIN001", Name: "elsewhere", NotMember: true})
	srv.AddChannel(Channel{ID: "G0SECRET01", Name: "secret", NotMember: true})
	parent := srv.Post(alice, general, "hello")
	cases := []struct {
		method string
		form   url.Values
		code   string
	}{
		{"conversations.history", url.Values{"channel": {"C0NOSUCH01"}}, "channel_not_found"},
		{"conversations.history", url.Values{"channel": {"G0SECRET01"}}, "channel_not_found"},
		{"conversations.history", url.Values{"channel": {"C0NOTIN001"}}, "not_in_channel"},
		{"conversations.replies", url.Values{"channel": {"C0NOTIN001"}, "ts": {"1.000001"}}, "not_in_channel"},
		{"conversations.replies", url.Values{"channel": {general}, "ts": {"1.000001"}}, "thread_not_found"},
		{"conversations.replies", url.Values{"channel": {general}}, "invalid_arguments"},
		{"conversations.replies", url.Values{"channel": {general}, "ts": {parent}, "cursor": {"not-a-cursor"}}, "invalid_cursor"},
		{"conversations.history", url.Values{"channel": {general}, "cursor": {base64.StdEncoding.EncodeToString([]byte("offset:3"))}}, "invalid_cursor"},
		{"conversations.history", url.Values{"channel": {general}, "oldest": {"yesterday"}}, "invalid_ts_oldest"},
		{"conversations.replies", url.Values{"channel": {general}, "ts": {parent}, "latest": {"1.2.3"}}, "invalid_ts_latest"},
	}
	for _, c := range cases {
		resp, body := rawCall(t, srv, c.method, c.form)
		var r struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != 200 || r.OK || r.Error != c.code {
			t.Errorf("%s %v: %d %s, want %s", c.method, c.form, resp.StatusCode, body, c.code)
		}
	}
	// A deleted parent with no replies is gone; slack-go surfaces the code.
	if err := srv.DeleteMessage(alice, general, parent); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := newAPI(srv).GetConversationRepliesContext(context.Background(), &slack.GetConversationRepliesParameters{ChannelID: general, Timestamp: parent})
	slackErr(t, err, "thread_not_found")
	// A call without ts is the app's mistake: Slack's invalid_arguments.
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "invalid_arguments") {
		t.Errorf("violations = %v", v)
	}
}

// Both methods are Tier 3 under Strict, each its own budget: a burst of 5,
// then 429 with a whole-second Retry-After.
func TestConversationsReadTier3(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{Strict: true, NoBotEcho: true})
	api := newAPI(srv)
	parent := srv.Post(alice, general, "hello")
	ctx := context.Background()
	calls := map[string]func() error{
		"conversations.replies": func() error {
			_, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: general, Timestamp: parent})
			return err
		},
		"conversations.history": func() error {
			_, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: general})
			return err
		},
	}
	for method, call := range calls {
		var rl *slack.RateLimitedError
		n := 0
		for ; n < 20; n++ {
			err := call()
			if errors.As(err, &rl) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
		}
		if rl == nil || n < 5 || rl.RetryAfter < time.Second || rl.RetryAfter%time.Second != 0 {
			t.Errorf("%s: limited after %d calls with %v", method, n, rl)
		}
	}
	noViolations(t, srv)
}
