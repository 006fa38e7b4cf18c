package fakeslack

import (
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// TestForgeAction: a forged click is an ordinary block_actions payload
// about the message it names, carrying the caller's action.
func TestForgeAction(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	s := runSocket(t, newAPI(srv), true)
	ts := srv.Post(bob, general, "no buttons here")
	s.next(nil) // the message event
	if err := srv.ForgeAction(alice, general, ts, map[string]any{"action_id": "perm_allow", "value": "toolu_OTHER", "block_id": "perm:toolu_OTHER"}); err != nil {
		t.Fatal(err)
	}
	evt := s.next(func(e socketmode.Event) bool { return e.Type == socketmode.EventTypeInteractive })
	cb := evt.Data.(slack.InteractionCallback)
	if c := cb.Container; c.MessageTs != ts || c.ChannelID != general || cb.Channel.ID != general || cb.User.ID != alice {
		t.Errorf("callback %+v", cb)
	}
	if a := cb.ActionCallback.BlockActions; len(a) != 1 || a[0].ActionID != "perm_allow" || a[0].Value != "toolu_OTHER" || a[0].BlockID != "perm:toolu_OTHER" || a[0].Type != "button" {
		t.Errorf("actions %+v", a)
	}
	if err := srv.ForgeAction(alice, general, "1.000001", map[string]any{"action_id": "x"}); err == nil {
		t.Error("a forged click on a message that does not exist was delivered")
	}
}
