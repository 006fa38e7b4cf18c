package fakeslack

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

func TestSendHTTPSignatures(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{SigningSecret: "s3cret"})
	var mu sync.Mutex
	var got []string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sv, err := slack.NewSecretsVerifier(r.Header, "s3cret")
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/events":
			ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			if ev.Type == slackevents.URLVerification {
				var c slackevents.ChallengeResponse
				_ = json.Unmarshal(body, &c)
				w.Header().Set("Content-Type", "text/plain")
				_, _ = w.Write([]byte(c.Challenge))
				return
			}
			got = append(got, "event "+ev.InnerEvent.Type+" retry="+r.Header.Get("X-Slack-Retry-Num"))
		case "/interactive":
			cb, err := slack.InteractionCallbackParse(r)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			got = append(got, "interactive "+cb.ActionCallback.BlockActions[0].ActionID)
		case "/commands":
			cmd, err := slack.SlashCommandParse(r)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			got = append(got, "command "+cmd.Command+" "+cmd.Text)
		}
	}))
	defer app.Close()

	event := []byte(`{"token":"t","team_id":"T0FAKETEAM","api_app_id":"A0FAKEAPP1","type":"event_callback","event_id":"Ev1","event_time":1,` +
		`"event":{"type":"app_mention","user":"U0ALICE001","text":"hi","ts":"1.000001","channel":"C0GENERAL1","event_ts":"1.000001"}}`)
	status := func(resp *http.Response, err error) int {
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event)); st != 200 {
		t.Errorf("good signature: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, BadSignature())); st != 401 {
		t.Errorf("bad signature: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, StaleTimestamp())); st != 401 {
		t.Errorf("stale timestamp: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, NoSignature())); st != 401 {
		t.Errorf("no signature: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, Retry(1, "http_timeout"))); st != 200 {
		t.Errorf("retry: %d", st)
	}
	interactive, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": alice},
		"actions": []any{map[string]any{"type": "button", "action_id": "perm_allow", "block_id": "b", "value": "v"}}})
	if st := status(srv.SendHTTP(app.URL+"/interactive", "interactive", interactive)); st != 200 {
		t.Errorf("interactive: %d", st)
	}
	slash := []byte(`{"command":"/claude","text":"status","user_id":"U0ALICE001","is_enterprise_install":"false"}`)
	if st := status(srv.SendHTTP(app.URL+"/commands", "slash_commands", slash)); st != 200 {
		t.Errorf("slash: %d", st)
	}
	if err := srv.VerifyURL(app.URL + "/events"); err != nil {
		t.Error(err)
	}
	mu.Lock()
	want := "event app_mention retry=|event app_mention retry=1|interactive perm_allow|command /claude status"
	if strings.Join(got, "|") != want {
		t.Errorf("app saw %q, want %q", strings.Join(got, "|"), want)
	}
	mu.Unlock()
}

func TestHTTPModeDelivery(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var attempts []string
	fail := 1
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sv, err := slack.NewSecretsVerifier(r.Header, "fakesigningsecret")
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			http.Error(w, err.Error(), 401)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/commands" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"response_type":"ephemeral","text":"ok!"}`))
			return
		}
		ev, _ := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
		cb := ev.Data.(*slackevents.EventsAPICallbackEvent)
		attempts = append(attempts, cb.EventID+" "+r.Header.Get("X-Slack-Retry-Num")+" "+r.Header.Get("X-Slack-Retry-Reason"))
		if fail > 0 {
			fail--
			w.WriteHeader(500)
		}
	}))
	defer app.Close()
	srv := Start(t, Options{EventsURL: app.URL + "/events", CommandsURL: app.URL + "/commands"})
	srv.DM(alice, "hello")
	if !srv.WaitFor(waitLong, func() bool { mu.Lock(); defer mu.Unlock(); return len(attempts) == 2 }) {
		t.Fatalf("attempts = %v", attempts)
	}
	mu.Lock()
	if a, b := strings.Fields(attempts[0]), strings.Fields(attempts[1]); a[0] != b[0] || len(a) != 1 || b[1] != "1" || b[2] != "http_error" {
		t.Errorf("attempts = %q", attempts)
	}
	mu.Unlock()
	if err := srv.Slash(alice, general, "/claude", "status"); err != nil {
		t.Fatal(err)
	}
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Ephemerals(general, alice)) == 1 }) {
		t.Fatal("no slash command response")
	}
	noViolations(t, srv)
}
