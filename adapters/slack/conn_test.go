package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// runAdapter runs an adapter made for fs (nothing is delivered anywhere);
// stop ends Run and returns its error.
func runAdapter(t *testing.T, fs *fakeslack.Server, mod func(*slack.Config)) (ad *slack.Adapter, stop func() error) {
	t.Helper()
	c := slack.Config{BotToken: fs.Opts.BotToken, AppToken: fs.Opts.AppToken, APIURL: fs.URL + "/api/"}
	if mod != nil {
		mod(&c)
	}
	ad, err := slack.New(c)
	if err != nil {
		t.Fatal(err)
	}
	if st := ad.ConnStatus(); st.State != adapters.Connecting {
		t.Errorf("before Run: %+v", st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, func(context.Context, adapters.Event) error { return nil }) }()
	var err2 error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err2 = <-done
			ad.Close()
		}
		return err2
	}
	t.Cleanup(func() { stop() })
	return ad, stop
}

// waitState waits until the adapter reports state with an error
// containing errPart.
func waitState(t *testing.T, fs *fakeslack.Server, ad *slack.Adapter, state adapters.ConnState, errPart string) adapters.ConnStatus {
	t.Helper()
	var st adapters.ConnStatus
	if !fs.WaitFor(wait, func() bool {
		st = ad.ConnStatus()
		return st.State == state && strings.Contains(st.LastError, errPart)
	}) {
		t.Fatalf("the adapter reports %+v, want %s with an error containing %q", st, state, errPart)
	}
	return st
}

// TestConnStatusSocketMode: the Socket Mode link as the adapter reports
// it follows the fake Slack's: connected; an outage (sockets dropped, new
// ones refused) is disconnected with the refusal; connected again once
// sockets are taken, the error kept; a reconnect Slack asks for passes
// back to connected. Once Run returns, disconnected.
func TestConnStatusSocketMode(t *testing.T) {
	fs := fakeslack.Start(t, fakeslack.Options{})
	ad, stop := runAdapter(t, fs, nil)
	up := waitState(t, fs, ad, adapters.Connected, "")
	if up.Via != "socket mode" || up.LastError != "" {
		t.Errorf("connected: %+v", up)
	}

	fs.SetOffline(true)
	down := waitState(t, fs, ad, adapters.Disconnected, "bad handshake")
	if !down.Since.After(up.Since) || down.LastErrorAt.IsZero() {
		t.Errorf("disconnected: %+v (connected since %s)", down, up.Since)
	}
	fs.SetOffline(false)
	back := waitState(t, fs, ad, adapters.Connected, "bad handshake")
	if !back.Since.After(down.Since) {
		t.Errorf("reconnected: %+v", back)
	}

	opened := len(fs.Calls("apps.connections.open"))
	fs.Disconnect("refresh_requested")
	if !fs.WaitFor(wait, func() bool { return len(fs.Calls("apps.connections.open")) > opened && fs.Connections() == 1 }) {
		t.Fatal("no new socket after Slack asked for one")
	}
	again := waitState(t, fs, ad, adapters.Connected, "")
	if !again.Since.After(back.Since) {
		t.Errorf("after the refresh: %+v, connected before since %s", again, back.Since)
	}

	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if st := ad.ConnStatus(); st.State != adapters.Disconnected {
		t.Errorf("after Run: %+v", st)
	}
}

// TestConnStatusHTTPAndRefused: in HTTP mode alone the adapter is
// connected once auth.test knows the bot; a token Slack refuses leaves it
// disconnected with Slack's error, and Run fails.
func TestConnStatusHTTPAndRefused(t *testing.T) {
	fs := fakeslack.Start(t, fakeslack.Options{})
	ad, _ := runAdapter(t, fs, func(c *slack.Config) { c.AppToken, c.SigningSecret = "", fs.Opts.SigningSecret })
	if st := waitState(t, fs, ad, adapters.Connected, ""); st.Via != "http" {
		t.Errorf("http mode: %+v", st)
	}

	ad, stop := runAdapter(t, fs, func(c *slack.Config) { c.BotToken = "xoxb-not-a-real-token" })
	st := waitState(t, fs, ad, adapters.Disconnected, "invalid_auth")
	if err := stop(); err == nil || strings.Contains(st.LastError, "xoxb-not-a-real-token") {
		t.Errorf("Run with a refused token: %v; status %+v", err, st)
	}
}
