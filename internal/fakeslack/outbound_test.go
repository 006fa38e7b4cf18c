package fakeslack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
)

// TestUnfurlFlags: a bot post without both previews off is a violation;
// form and JSON bodies, "false" and "0" count as off.
func TestUnfurlFlags(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	text := slack.MsgOptionText("see https://example.org", false)
	cases := []struct {
		name      string
		opts      []slack.MsgOption
		violation string // "" for none
	}{
		{"both off", []slack.MsgOption{slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl()}, ""},
		{"neither", nil, "unfurl_links=false, unfurl_media=false"},
		{"links only", []slack.MsgOption{slack.MsgOptionDisableLinkUnfurl()}, "without unfurl_media=false"},
		{"media only", []slack.MsgOption{slack.MsgOptionDisableMediaUnfurl()}, "without unfurl_links=false"},
		{"links on", []slack.MsgOption{slack.MsgOptionEnableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl()}, "without unfurl_links=false"},
		{"zeros", []slack.MsgOption{slack.UnsafeMsgOptionEndpoint(srv.URL+"/api/chat.postMessage", func(v url.Values) {
			v.Set("unfurl_links", "0")
			v.Set("unfurl_media", "0")
		})}, ""},
	}
	for _, c := range cases {
		before := len(srv.Violations())
		if _, _, err := api.PostMessage(general, append([]slack.MsgOption{text}, c.opts...)...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		v := srv.Violations()[before:]
		switch {
		case c.violation == "" && len(v) > 0:
			t.Errorf("%s: violations %q", c.name, v)
		case c.violation != "" && (len(v) != 1 || !strings.Contains(v[0], c.violation)):
			t.Errorf("%s: violations %q, want one with %q", c.name, v, c.violation)
		}
	}

	// A JSON body: booleans.
	for _, c := range []struct {
		body      string
		violation bool
	}{
		{`{"channel":"C0GENERAL1","text":"x","unfurl_links":false,"unfurl_media":false}`, false},
		{`{"channel":"C0GENERAL1","text":"x","unfurl_links":true,"unfurl_media":false}`, true},
		{`{"channel":"C0GENERAL1","text":"x"}`, true},
	} {
		before := len(srv.Violations())
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/chat.postMessage", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("Authorization", "Bearer "+srv.Opts.BotToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := len(srv.Violations()) > before; got != c.violation {
			t.Errorf("%s: violation %v, want %v", c.body, got, c.violation)
		}
	}
}

func TestLiveMentionsOracle(t *testing.T) {
	z := "\u200b"
	for in, want := range map[string]string{
		"<!here>":                 "<!here>",
		"a <!here|here> b":        "<!here|here>",
		"<!channel> <!everyone>":  "<!channel>,<!everyone>",
		"<@U0BOB00001|bob>":       "<@U0BOB00001|bob>",
		"<#C0GENERAL1>":           "<#C0GENERAL1>",
		"<!subteam^S0OPS|@ops>":   "<!subteam^S0OPS|@ops>",
		"hey @here, @Channel!":    "@here,@Channel",
		"@EVERYONE":               "@EVERYONE",
		"<" + z + "!here>":        "",
		"@" + z + "here":          "",
		"&lt;!here&gt;":           "",
		"<!he":                    "",
		"<https://x.org/@here|x>": "",
		"<https://x.org|@here>":   "@here",
		"plain <b> & text":        "",
	} {
		if got := strings.Join(LiveMentions(in), ","); got != want {
			t.Errorf("LiveMentions(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestForbidMentions: with ForbidMentions, a stream whose pieces add up to
// a mention is caught when it is whole, as are posts, updates, ephemerals
// and mention elements in blocks; plain_text labels are not mentions.
func TestForbidMentions(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{Streaming: true, NoBotEcho: true, ForbidMentions: true})
	api := newAPI(srv)
	ctx := context.Background()
	parent := srv.Post(alice, general, "<@U0FAKEBOT1> explain")
	count := func() int { return len(srv.Violations()) }

	_, ts, err := api.StartStreamContext(ctx, general, slack.MsgOptionTS(parent),
		slack.MsgOptionRecipientUserID(alice), slack.MsgOptionRecipientTeamID("T0FAKETEAM"), slack.MsgOptionMarkdownText("ping <!he"))
	if err != nil {
		t.Fatal(err)
	}
	if count() != 0 {
		t.Fatalf("an unfinished mention is a violation: %v", srv.Violations())
	}
	if _, _, err := api.AppendStreamContext(ctx, general, ts, slack.MsgOptionMarkdownText("re> now")); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "chat.appendStream") || !strings.Contains(v[0], "<!here>") {
		t.Fatalf("split <!here> in a stream: violations %q", v)
	}
	if m, _ := srv.Message(general, ts); strings.Join(m.LiveMentions(), ",") != "<!here>" {
		t.Errorf("rendered stream %q shows %q", m.MarkdownText, m.LiveMentions())
	}

	n := count()
	_, ok, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("fine", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("a", slack.NewButtonBlockElement("b", "v", slack.NewTextBlockObject("plain_text", "@here <!here>", false, false)))))
	if err != nil {
		t.Fatal(err)
	}
	if count() != n {
		t.Errorf("a plain_text label counted as a mention: %v", srv.Violations()[n:])
	}
	for _, opt := range []slack.MsgOption{
		slack.MsgOptionText("hi @channel", false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "<@U0BOB00001>", false, false), nil, nil)),
		slack.MsgOptionBlocks(slack.NewRichTextBlock("r", slack.NewRichTextSection(slack.NewRichTextSectionBroadcastElement("here")))),
	} {
		n := count()
		if _, _, _, err := api.UpdateMessageContext(ctx, general, ok, opt); err != nil {
			t.Fatal(err)
		}
		if count() != n+1 {
			t.Errorf("update with a live mention not caught: %v", srv.Violations()[n:])
		}
	}
	n = count()
	if _, err := api.PostEphemeral(general, alice, slack.MsgOptionText("<!everyone>", false)); err != nil {
		t.Fatal(err)
	}
	if count() != n+1 {
		t.Error("ephemeral with a live mention not caught")
	}
}

// TestReplayHTTP: a replay is the same bytes, timestamp and signature.
func TestReplayHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	type seen struct {
		body     []byte
		ts, sig  string
		ct, path string
	}
	var got []seen
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{b, r.Header.Get("X-Slack-Request-Timestamp"), r.Header.Get("X-Slack-Signature"), r.Header.Get("Content-Type"), r.URL.Path})
		mu.Unlock()
	}))
	defer app.Close()
	srv := Start(t, Options{InteractivityURL: app.URL + "/interactive"})
	if _, err := srv.ReplayHTTP("interactive"); err == nil {
		t.Fatal("replay of nothing succeeded")
	}
	payload, _ := json.Marshal(map[string]any{"type": "block_actions", "actions": []any{map[string]any{"action_id": "x"}}})
	resp, err := srv.SendHTTP(app.URL+"/interactive", "interactive", payload)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = srv.ReplayHTTP("interactive")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	a, b := got[0], got[1]
	if !bytes.Equal(a.body, b.body) || a.ts != b.ts || a.sig != b.sig || a.ct != b.ct || a.path != b.path || a.sig == "" {
		t.Errorf("replay differs:\n%+v\n%+v", a, b)
	}
	if a.sig != Sign(srv.Opts.SigningSecret, a.ts, a.body) {
		t.Error("the original is not validly signed")
	}
}
