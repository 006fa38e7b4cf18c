package fakeslack

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// mrkdwnOfLen is a mrkdwn text object n characters long, to probe limits.
func mrkdwnOfLen(n int) *slack.TextBlockObject {
	return slack.NewTextBlockObject("mrkdwn", strings.Repeat("a", n), false, false)
}

// plainText is a plain_text object, the kind labels and headers take.
func plainText(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject("plain_text", s, false, false)
}

// labelledButton is a button whose label, not its value, is under test.
func labelledButton(id, label string) *slack.ButtonBlockElement {
	return slack.NewButtonBlockElement(id, "v", plainText(label))
}

// validationCases are posts and how Slack answers them: code is the error
// ("" for success) and msgs the response_metadata messages, when checked.
var validationCases = []struct {
	name string
	opts []slack.MsgOption
	code string
	msgs []string
}{
	{"section text", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewSectionBlock(mrkdwnOfLen(3001), nil, nil))},
		"invalid_blocks", []string{"[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]"}},
	{"section text at the limit", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewSectionBlock(mrkdwnOfLen(3000), nil, nil))}, "", nil},
	{"too many blocks", []slack.MsgOption{slack.MsgOptionBlocks(func() []slack.Block {
		var bs []slack.Block
		for i := 0; i < 51; i++ {
			bs = append(bs, slack.NewDividerBlock())
		}
		return bs
	}()...)}, "invalid_blocks", []string{"[ERROR] no more than 50 items allowed [json-pointer:/blocks]"}},
	{"header", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewHeaderBlock(plainText(strings.Repeat("h", 151))))},
		"invalid_blocks", []string{"[ERROR] must be less than 151 characters [json-pointer:/blocks/0/text/text]"}},
	{"button text", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", labelledButton("x", strings.Repeat("b", 76))))},
		"invalid_blocks", []string{"[ERROR] must be less than 76 characters [json-pointer:/blocks/0/elements/0/text/text]"}},
	{"duplicate action_id", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", labelledButton("x", "1"), labelledButton("x", "2")))},
		"invalid_blocks", []string{"[ERROR] duplicate action_id: x [json-pointer:/blocks/0/elements/1/action_id]"}},
	{"duplicate block_id", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", labelledButton("x", "1")), slack.NewActionBlock("a", labelledButton("y", "2")))},
		"invalid_blocks", []string{"[ERROR] duplicate block_id: a [json-pointer:/blocks/1/block_id]"}},
	{"26 actions", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", func() []slack.BlockElement {
		var els []slack.BlockElement
		for i := 0; i < 26; i++ {
			els = append(els, labelledButton("b"+itoa(i), "x"))
		}
		return els
	}()...))}, "invalid_blocks", []string{"[ERROR] no more than 25 items allowed [json-pointer:/blocks/0/elements]"}},
	{"option value", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", slack.NewOptionsSelectBlockElement("static_select", plainText("pick"), "s",
		slack.NewOptionBlockObject(strings.Repeat("v", 151), plainText("x"), nil))))},
		"invalid_blocks", []string{"[ERROR] must be less than 151 characters [json-pointer:/blocks/0/elements/0/options/0/value]"}},
	{"11 checkboxes", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", slack.NewCheckboxGroupsBlockElement("c", func() []*slack.OptionBlockObject {
		var os []*slack.OptionBlockObject
		for i := 0; i < 11; i++ {
			os = append(os, slack.NewOptionBlockObject(itoa(i), plainText("x"), nil))
		}
		return os
	}()...)))}, "invalid_blocks", []string{"[ERROR] no more than 10 items allowed [json-pointer:/blocks/0/elements/0/options]"}},
	{"markdown total", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewMarkdownBlock("", strings.Repeat("m", 7000)), slack.NewMarkdownBlock("", strings.Repeat("m", 5001)))},
		"invalid_blocks", []string{"[ERROR] total length of markdown blocks must be less than 12001 characters [json-pointer:/blocks]"}},
	{"blocks too long overall", []slack.MsgOption{slack.MsgOptionBlocks(
		slack.NewSectionBlock(mrkdwnOfLen(3000), nil, nil), slack.NewSectionBlock(mrkdwnOfLen(3000), nil, nil), slack.NewSectionBlock(mrkdwnOfLen(3000), nil, nil),
		slack.NewSectionBlock(mrkdwnOfLen(3000), nil, nil), slack.NewSectionBlock(mrkdwnOfLen(3000), nil, nil))}, "msg_blocks_too_long", nil},
	{"agent UI block", []slack.MsgOption{slack.MsgOptionBlocks(&slack.UnknownBlock{Type: "alert"})},
		"invalid_blocks", []string{"[ERROR] unsupported block type: alert [json-pointer:/blocks/0/type]"}},
	{"markdown_text with text", []slack.MsgOption{slack.MsgOptionText("t", false), slack.MsgOptionMarkdownText("**m**")}, "markdown_text_conflict", nil},
	{"markdown_text too long", []slack.MsgOption{slack.MsgOptionMarkdownText(strings.Repeat("m", 12001))}, "msg_too_long", nil},
	{"markdown_text", []slack.MsgOption{slack.MsgOptionMarkdownText("**bold**")}, "", nil},
	{"no text", []slack.MsgOption{slack.MsgOptionText("", false)}, "no_text", nil},
}

func TestValidation(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	wantViolations := 0
	for _, c := range validationCases {
		_, _, err := api.PostMessage(general, append([]slack.MsgOption{noUnfurl}, c.opts...)...)
		if c.code == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		wantViolations++
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != c.code {
			t.Errorf("%s: err = %v, want %s", c.name, err, c.code)
			continue
		}
		if c.msgs != nil && strings.Join(se.ResponseMetadata.Messages, "|") != strings.Join(c.msgs, "|") {
			t.Errorf("%s: messages = %q, want %q", c.name, se.ResponseMetadata.Messages, c.msgs)
		}
	}
	if got := len(srv.Violations()); got != wantViolations {
		t.Errorf("%d violations, want %d: %v", got, wantViolations, srv.Violations())
	}

	// Text: postMessage truncates past 40,000 (a violation); update and
	// postEphemeral answer msg_too_long past 4,000.
	_, ts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionText(strings.Repeat("t", 40001), false))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(general, ts); len(m.Text) != 40000 {
		t.Errorf("stored text length %d", len(m.Text))
	}
	_, _, _, err = api.UpdateMessage(general, ts, slack.MsgOptionText(strings.Repeat("t", 4001), false))
	slackErr(t, err, "msg_too_long")
	_, err = api.PostEphemeral(general, alice, slack.MsgOptionText(strings.Repeat("t", 4001), false))
	slackErr(t, err, "msg_too_long")
	if got := len(srv.Violations()); got != wantViolations+3 {
		t.Errorf("%d violations, want %d: %v", got, wantViolations+3, srv.Violations())
	}
	// A raw blocks argument that is not an array.
	_, _, err = api.PostMessage(general, noUnfurl, slack.UnsafeMsgOptionEndpoint(srv.URL+"/api/chat.postMessage", func(v url.Values) { v.Set("blocks", `{"type":"divider"}`) }))
	slackErr(t, err, "invalid_blocks_format")
}
