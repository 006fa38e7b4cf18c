package fakeslack

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

func TestClickSelectCheck(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	s := runSocket(t, api, true)

	parent := srv.Post(bob, general, "do it")
	s.next(nil) // the message event
	allow := slack.NewButtonBlockElement("perm_allow", "toolu_01ABC", plainText("Approve")).WithStyle(slack.StylePrimary)
	deny := slack.NewButtonBlockElement("perm_deny", "toolu_01ABC", plainText("Deny")).WithStyle(slack.StyleDanger)
	_, ts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("Claude wants to run Bash: ls -la", false),
		slack.MsgOptionBlocks(
			slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*Bash* wants to run `ls -la`", false, false), nil, nil, slack.SectionBlockOptionBlockID("perm-text")),
			slack.NewActionBlock("perm:toolu_01ABC", allow, deny),
		))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Click(alice, general, ts, "perm_allow"); err != nil {
		t.Fatal(err)
	}
	evt := s.next(nil)
	if evt.Type != socketmode.EventTypeInteractive || evt.Request.AcceptsResponsePayload {
		t.Fatalf("event %s accepts %v", evt.Type, evt.Request.AcceptsResponsePayload)
	}
	cb := evt.Data.(slack.InteractionCallback)
	checkApprovalClick(t, srv, cb, ts, parent)

	// Replace the message through the response_url; the buttons are gone.
	if _, _, err := api.PostMessage(general, noUnfurl, slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("Approved by <@U0ALICE001>", false)); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(general, ts); m.Text != "Approved by <@U0ALICE001>" || len(m.ActionIDs()) != 0 {
		t.Errorf("replaced message = %+v", m)
	}
	if err := srv.Click(alice, general, ts, "perm_deny"); err == nil {
		t.Error("clicking a removed button succeeded")
	}

	clickSelectCheckQuestion(t, srv, api, s, parent)
	clickSelectCheckEphemeral(t, srv, api, s)
	noViolations(t, srv)
}

// checkApprovalClick checks the block_actions payload of alice's click on
// the Approve button of the permission prompt ts, in the thread of parent.
func checkApprovalClick(t *testing.T, srv *Server, cb slack.InteractionCallback, ts, parent string) {
	t.Helper()
	if cb.Type != slack.InteractionTypeBlockActions || cb.User.ID != alice || cb.User.Name != "alice" || cb.Team.ID != "T0FAKETEAM" {
		t.Errorf("callback = %+v", cb)
	}
	if c := cb.Container; c.Type != "message" || c.MessageTs != ts || c.ChannelID != general || c.ThreadTs != parent || c.IsEphemeral {
		t.Errorf("container = %+v", c)
	}
	if len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("actions = %+v", cb.ActionCallback)
	}
	a := cb.ActionCallback.BlockActions[0]
	if a.ActionID != "perm_allow" || a.BlockID != "perm:toolu_01ABC" || a.Value != "toolu_01ABC" || a.Text.Text != "Approve" || a.ActionTs == "" {
		t.Errorf("action = %+v", a)
	}
	if cb.Message.Timestamp != ts || len(cb.Message.Blocks.BlockSet) != 2 || cb.Channel.ID != general || cb.Channel.Name != "general" {
		t.Errorf("message = %+v", cb.Message)
	}
	if !strings.HasPrefix(cb.ResponseURL, srv.URL+"/actions/T0FAKETEAM/") || cb.TriggerID == "" {
		t.Errorf("response_url %q trigger %q", cb.ResponseURL, cb.TriggerID)
	}
}

// clickSelectCheckQuestion answers a question (static_select and
// checkboxes, then a submit button) in the thread of parent: each action
// arrives with its own value and the state of the inputs so far, per user.
func clickSelectCheckQuestion(t *testing.T, srv *Server, api *slack.Client, s *sock, parent string) {
	_, qts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("Which runner?", false),
		slack.MsgOptionBlocks(
			slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "Which test runner?", false, false), nil,
				slack.NewAccessory(slack.NewOptionsSelectBlockElement("static_select", plainText("Choose one"), "question_1",
					slack.NewOptionBlockObject("0", plainText("go test"), nil), slack.NewOptionBlockObject("1", plainText("gotestsum"), nil))),
				slack.SectionBlockOptionBlockID("q:1")),
			slack.NewActionBlock("q:2", slack.NewCheckboxGroupsBlockElement("question_2",
				slack.NewOptionBlockObject("race", plainText("-race"), nil), slack.NewOptionBlockObject("cover", plainText("-cover"), nil), slack.NewOptionBlockObject("v", plainText("-v"), nil))),
			slack.NewActionBlock("q:submit", slack.NewButtonBlockElement("submit", "q", plainText("Submit"))),
		))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Select(alice, general, qts, "question_1", "1"); err != nil {
		t.Fatal(err)
	}
	cb := s.next(nil).Data.(slack.InteractionCallback)
	if a := cb.ActionCallback.BlockActions[0]; a.Type != "static_select" || a.SelectedOption.Value != "1" || a.SelectedOption.Text.Text != "gotestsum" {
		t.Errorf("select action = %+v", a)
	}
	if st := cb.BlockActionState.Values["q:1"]["question_1"]; st.SelectedOption.Value != "1" {
		t.Errorf("state = %+v", cb.BlockActionState)
	}
	if err := srv.Check(alice, general, qts, "question_2", []string{"v", "race"}); err != nil {
		t.Fatal(err)
	}
	cb = s.next(nil).Data.(slack.InteractionCallback)
	if a := cb.ActionCallback.BlockActions[0]; a.Type != "checkboxes" || len(a.SelectedOptions) != 2 || a.SelectedOptions[0].Value != "race" {
		t.Errorf("checkboxes action = %+v", a)
	}
	if err := srv.Select(alice, general, qts, "question_1", "7"); err == nil {
		t.Error("selecting a missing option succeeded")
	}
	if err := srv.Click(alice, general, qts, "submit"); err != nil {
		t.Fatal(err)
	}
	cb = s.next(nil).Data.(slack.InteractionCallback)
	vals := cb.BlockActionState.Values
	if vals["q:1"]["question_1"].SelectedOption.Value != "1" || len(vals["q:2"]["question_2"].SelectedOptions) != 2 || cb.ActionCallback.BlockActions[0].ActionID != "submit" {
		t.Errorf("submit state = %+v", vals)
	}
	// Another user's state is their own.
	if err := srv.Click(bob, general, qts, "submit"); err != nil {
		t.Fatal(err)
	}
	if cb = s.next(nil).Data.(slack.InteractionCallback); len(cb.BlockActionState.Values) != 0 || cb.User.ID != bob {
		t.Errorf("bob's state = %+v", cb.BlockActionState.Values)
	}
}

// clickSelectCheckEphemeral clicks a button in an ephemeral message:
// container.is_ephemeral, no message, and only its recipient may click.
func clickSelectCheckEphemeral(t *testing.T, srv *Server, api *slack.Client, s *sock) {
	ets, err := api.PostEphemeral(general, alice, slack.MsgOptionText("only you", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("e", slack.NewButtonBlockElement("dismiss", "x", plainText("Dismiss")))))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Click(alice, general, ets, "dismiss"); err != nil {
		t.Fatal(err)
	}
	cb := s.next(nil).Data.(slack.InteractionCallback)
	if !cb.Container.IsEphemeral || cb.Message.Timestamp != "" {
		t.Errorf("ephemeral click = %+v", cb)
	}
	if _, _, err := api.PostMessage(general, noUnfurl, slack.MsgOptionDeleteOriginal(cb.ResponseURL)); err != nil {
		t.Fatal(err)
	}
	if e := srv.Ephemerals(general, alice); len(e) != 0 {
		t.Errorf("ephemerals after delete_original = %+v", e)
	}
	if err := srv.Click(bob, general, ets, "dismiss"); err == nil {
		t.Error("bob clicked alice's ephemeral message")
	}
}

func TestInteractiveNotAckedIsAViolation(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{AckTimeout: 100 * time.Millisecond, NoBotEcho: true})
	api := newAPI(srv)
	s := runSocket(t, api, false)
	_, ts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionText("q", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("a", slack.NewButtonBlockElement("ok", "1", slack.NewTextBlockObject("plain_text", "OK", false, false)))))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Click(alice, general, ts, "ok"); err != nil {
		t.Fatal(err)
	}
	s.next(nil)
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Violations()) == 1 }) {
		t.Fatalf("violations = %v", srv.Violations())
	}
	s.none(300 * time.Millisecond) // interactive payloads are not redelivered
}

func TestSlashCommand(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	s := runSocket(t, newAPI(srv), false)
	if err := srv.Slash(alice, general, "/claude", "schedule daily 09:00 summarise open PRs"); err != nil {
		t.Fatal(err)
	}
	evt := s.next(nil)
	cmd, ok := evt.Data.(slack.SlashCommand)
	if !ok || evt.Type != socketmode.EventTypeSlashCommand || !evt.Request.AcceptsResponsePayload {
		t.Fatalf("event = %+v", evt)
	}
	if cmd.Command != "/claude" || cmd.Text != "schedule daily 09:00 summarise open PRs" || cmd.UserID != alice || cmd.UserName != "alice" ||
		cmd.ChannelID != general || cmd.ChannelName != "general" || cmd.TeamID != "T0FAKETEAM" || cmd.APIAppID != "A0FAKEAPP1" || cmd.IsEnterpriseInstall {
		t.Errorf("command = %+v", cmd)
	}
	if err := s.sm.Ack(*evt.Request, map[string]any{"response_type": "ephemeral", "text": "Scheduled: daily at 09:00"}); err != nil {
		t.Fatal(err)
	}
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Ephemerals(general, alice)) == 1 }) {
		t.Fatal("no ephemeral response")
	}
	if e := srv.Ephemerals(general, alice)[0]; e.Text != "Scheduled: daily at 09:00" || e.BotID != "B0FAKEBOT1" {
		t.Errorf("ephemeral = %+v", e)
	}
	// in_channel through the response_url.
	resp, err := http.Post(cmd.ResponseURL, "application/json", strings.NewReader(`{"response_type":"in_channel","text":"Done"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("response_url: %v %v", resp, err)
	}
	resp.Body.Close()
	if msgs := srv.Messages(general); len(msgs) != 1 || msgs[0].Text != "Done" {
		t.Errorf("messages = %+v", msgs)
	}
	noViolations(t, srv)
	// Over the limit of 5 uses.
	for i := 0; i < 5; i++ {
		resp, _ := http.Post(cmd.ResponseURL, "application/json", strings.NewReader(`{"text":"again"}`))
		resp.Body.Close()
	}
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "used 6 times") {
		t.Errorf("violations = %v", v)
	}
}
