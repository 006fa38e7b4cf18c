package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// testdata/fixtures are Slack's real payload shapes, kept here as they
// were recorded. These tests read the fake's raw frames and bodies (not through
// slack-go, which would hide missing fields) and check that every key of the
// fixture is there with the same JSON type.

func loadFixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// shapeDiff lists the keys of want missing from got, or of another JSON type.
func shapeDiff(want, got any, path string) []string {
	if kind(want) != kind(got) {
		return []string{fmt.Sprintf("%s: %s in the fixture, %s here", path, kind(want), kind(got))}
	}
	var out []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "_http" {
				continue
			}
			gv, ok := g[k]
			if !ok {
				out = append(out, path+"/"+k+": missing")
				continue
			}
			out = append(out, shapeDiff(w[k], gv, path+"/"+k)...)
		}
	case []any:
		g := got.([]any)
		for i := range w {
			if i >= len(g) {
				out = append(out, fmt.Sprintf("%s: %d items in the fixture, %d here", path, len(w), len(g)))
				break
			}
			out = append(out, shapeDiff(w[i], g[i], fmt.Sprintf("%s/%d", path, i))...)
		}
	}
	return out
}

func checkShape(t *testing.T, fixture string, got []byte) map[string]any {
	t.Helper()
	var g map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: not JSON: %s", fixture, got)
	}
	if d := shapeDiff(loadFixture(t, fixture), g, ""); len(d) > 0 {
		t.Errorf("%s differs:\n  %s\ngot %s", fixture, strings.Join(d, "\n  "), got)
	}
	return g
}

// rawSocket is a bare Socket Mode client.
type rawSocket struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialRaw(t *testing.T, api *slack.Client) *rawSocket {
	t.Helper()
	_, u, err := api.StartSocketModeContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &rawSocket{t: t, ws: ws}
}

func (r *rawSocket) read() []byte {
	r.t.Helper()
	_ = r.ws.SetReadDeadline(time.Now().Add(waitLong))
	_, b, err := r.ws.ReadMessage()
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return b
}

// readEnvelope reads the next envelope and acks it.
func (r *rawSocket) readEnvelope() ([]byte, map[string]any) {
	r.t.Helper()
	b := r.read()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		r.t.Fatal(err)
	}
	if id, _ := m["envelope_id"].(string); id != "" {
		if err := r.ws.WriteJSON(map[string]any{"envelope_id": id}); err != nil {
			r.t.Fatal(err)
		}
	}
	return b, m
}

func payloadOf(t *testing.T, env map[string]any) []byte {
	b, err := json.Marshal(env["payload"])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rawCall(t *testing.T, srv *Server, method string, form url.Values) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/"+method, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+srv.Opts.BotToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestShapesMatchFixtures(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	api := newAPI(srv)
	ws := dialRaw(t, api)

	checkShape(t, "socket_hello.json", ws.read())

	// A mention: message + app_mention.
	parent := srv.Post(alice, general, "<@U0FAKEBOT1> run the unit tests & summarise failures")
	for i := 0; i < 2; i++ {
		b, env := ws.readEnvelope()
		ev := env["payload"].(map[string]any)["event"].(map[string]any)
		if ev["type"] == "app_mention" {
			checkShape(t, "socket_events_api_app_mention.json", b)
		}
	}
	// A thread reply.
	srv.Reply(alice, general, parent, "also check the flaky one")
	b, _ := ws.readEnvelope()
	checkShape(t, "socket_events_api_thread_message.json", b)

	// The bot's replies, with the fixtures' own blocks: response and echo.
	fixtureBlocks := func(name string) string {
		b, _ := json.Marshal(loadFixture(t, name)["payload"].(map[string]any)["message"].(map[string]any)["blocks"])
		return string(b)
	}
	_, body := rawCall(t, srv, "chat.postMessage", url.Values{"channel": {general}, "thread_ts": {parent},
		"text": {"Claude wants to run Bash: ls -la"}, "blocks": {fixtureBlocks("socket_interactive_block_actions_button.json")}})
	resp := checkShape(t, "web_chat_postMessage_response.json", body)
	ts := resp["ts"].(string)
	_, env := ws.readEnvelope()
	checkShape(t, "events_api_bot_message_echo.json", payloadOf(t, env))
	_, body = rawCall(t, srv, "chat.postMessage", url.Values{"channel": {general}, "thread_ts": {parent},
		"text": {"Which test runner should I use?"}, "blocks": {fixtureBlocks("socket_interactive_block_actions_static_select.json")}})
	qts := checkShape(t, "web_chat_postMessage_response.json", body)["ts"].(string)
	ws.readEnvelope()

	// Interactions.
	if err := srv.Click(alice, general, ts, "perm_allow"); err != nil {
		t.Fatal(err)
	}
	b, _ = ws.readEnvelope()
	checkShape(t, "socket_interactive_block_actions_button.json", b)
	if err := srv.Select(alice, general, qts, "question_1", "1"); err != nil {
		t.Fatal(err)
	}
	b, _ = ws.readEnvelope()
	checkShape(t, "socket_interactive_block_actions_static_select.json", b)

	// An edit of the bot's message.
	if _, _, _, err := api.UpdateMessage(general, ts, slack.MsgOptionText("Approved by <@U0ALICE001>", false)); err != nil {
		t.Fatal(err)
	}
	_, env = ws.readEnvelope()
	checkShape(t, "events_api_message_changed.json", payloadOf(t, env))

	// A slash command.
	if err := srv.Slash(alice, general, "/claude", "schedule daily 09:00 summarise open PRs"); err != nil {
		t.Fatal(err)
	}
	b, _ = ws.readEnvelope()
	checkShape(t, "socket_slash_command.json", b)

	// Disconnects.
	srv.Disconnect("refresh_requested")
	checkShape(t, "socket_disconnect_refresh_requested.json", ws.read())

	// Errors.
	_, body = rawCall(t, srv, "chat.postMessage", url.Values{"channel": {general},
		"blocks": {`[{"type":"section","text":{"type":"mrkdwn","text":"` + strings.Repeat("x", 3001) + `"}}]`}})
	g := checkShape(t, "web_error_invalid_blocks.json", body)
	if fmt.Sprint(g["response_metadata"].(map[string]any)["messages"]) != fmt.Sprint(loadFixture(t, "web_error_invalid_blocks.json")["response_metadata"].(map[string]any)["messages"]) {
		t.Errorf("invalid_blocks messages = %v", g["response_metadata"])
	}
	srv.Fail("chat.update", Fault{RetryAfter: 30})
	r, body := rawCall(t, srv, "chat.update", url.Values{"channel": {general}, "ts": {ts}, "text": {"x"}})
	checkShape(t, "web_error_ratelimited_429.json", body)
	if r.StatusCode != 429 || r.Header.Get("Retry-After") != "30" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("429: %d %v", r.StatusCode, r.Header)
	}
}

func TestURLVerificationFixture(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	var got []byte
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		var c struct{ Challenge string }
		_ = json.Unmarshal(got, &c)
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": c.Challenge})
	})
	ts := httptestServer(t, app)
	if err := srv.VerifyURL(ts); err != nil {
		t.Fatal(err)
	}
	checkShape(t, "events_api_url_verification.json", got)
}

func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}
