package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestAttachedFilesAreDownloaded: files on a mention are fetched with the
// bot token and handed to the bot with the message.
func TestAttachedFilesAreDownloaded(t *testing.T) {
	fs := fakeslack.Start(t, fakeslack.Options{})
	png := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+fs.Opts.BotToken {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		_, _ = w.Write(png)
	}))
	defer files.Close()

	ad, err := slack.New(slack.Config{BotToken: fs.Opts.BotToken, AppToken: fs.Opts.AppToken, APIURL: fs.URL + "/api/"})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan adapters.Event, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ad.Run(ctx, func(_ context.Context, ev adapters.Event) error { events <- ev; return nil })
	}()
	t.Cleanup(func() { cancel(); <-done; ad.Close() })
	fs.WaitConnections(1, wait)

	payload, _ := json.Marshal(map[string]any{
		"token": "x", "team_id": "T0FAKETEAM", "api_app_id": "A0FAKEAPP1", "type": "event_callback",
		"event_id": "EvFILE1", "event_time": time.Now().Unix(),
		"event": map[string]any{
			"type": "app_mention", "user": alice, "text": mention + "what is in this picture?",
			"ts": "1795331000.000100", "channel": general, "event_ts": "1795331000.000100",
			"files": []map[string]any{{
				"id": "F1", "name": "shot.png", "mimetype": "image/png", "size": len(png),
				"url_private_download": files.URL + "/shot.png",
			}},
		},
	})
	fs.Deliver("events_api", payload)
	select {
	case ev := <-events:
		if ev.Text != "what is in this picture?" || len(ev.Files) != 1 {
			t.Fatalf("event %+v", ev)
		}
		f := ev.Files[0]
		if f.Name != "shot.png" || f.MimeType != "image/png" || string(f.Data) != string(png) {
			t.Errorf("file %s %s %q", f.Name, f.MimeType, f.Data)
		}
	case <-time.After(wait):
		t.Fatal("no event")
	}
}
