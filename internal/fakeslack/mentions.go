package fakeslack

import (
	"encoding/json"
	"regexp"
	"strings"
)

// What Slack turns into a mention or a notification in what a message
// shows (Slack's "Formatting text for app surfaces"): the angle
// bracket entities <!here>, <!channel>, <!everyone> (also "|label" forms),
// <@U…>, <#C…>, <!subteam^…>, and the bare words @here, @channel and
// @everyone, which Slack resolves in typed text, with link_names, and may
// resolve in its own Markdown rendering. The oracle is deliberately
// simple and independent of the app's escaping: a U+200B or an entity
// (&lt;) anywhere inside the syntax breaks it, anything else does not.
var (
	liveEntity    = regexp.MustCompile(`<[!@#][^<>]*>`)
	liveBroadcast = regexp.MustCompile(`(?i)@(here|channel|everyone)`)
	// linkTarget is the URL part of a mrkdwn link <scheme:…|label>, where
	// an "@here" is part of an address, not a mention.
	linkTarget = regexp.MustCompile(`<[A-Za-z][A-Za-z0-9+.\-]*:[^<>|\s]*`)
)

// LiveMentions returns the live mention syntax in s, in order: what a
// Slack client would render as a mention or a channel-wide notification.
func LiveMentions(s string) []string {
	out := liveEntity.FindAllString(s, -1)
	return append(out, liveBroadcast.FindAllString(linkTarget.ReplaceAllString(s, "<"), -1)...)
}

// LiveMentions returns the live mention syntax in everything the message
// shows: its text, its markdown_text (for a stream, every piece appended
// so far, concatenated as Slack concatenates them), the mrkdwn and
// markdown texts of its blocks, its stream chunks, and any rich_text
// mention elements. plain_text objects (button labels, headers) are left
// out: Slack shows them literally.
func (m Message) LiveMentions() []string {
	texts := []string{m.Text}
	if m.MarkdownText != m.Text {
		texts = append(texts, m.MarkdownText)
	}
	var blocks any
	if len(m.Blocks) > 0 && json.Unmarshal(m.Blocks, &blocks) == nil {
		shownTexts(blocks, &texts)
	}
	for _, c := range m.Chunks {
		var v any
		if json.Unmarshal(c, &v) == nil {
			shownTexts(v, &texts)
		}
	}
	var out []string
	for _, t := range texts {
		out = append(out, LiveMentions(t)...)
	}
	return out
}

// shownTexts collects the texts of a block tree that Slack formats, and
// writes rich_text mention elements as the entity they stand for.
func shownTexts(v any, out *[]string) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			shownTexts(e, out)
		}
	case map[string]any:
		switch str(x["type"]) {
		case "plain_text":
			return
		case "broadcast":
			*out = append(*out, "<!"+str(x["range"])+">")
		case "user":
			*out = append(*out, "<@"+str(x["user_id"])+">")
		case "usergroup":
			*out = append(*out, "<!subteam^"+str(x["usergroup_id"])+">")
		case "channel":
			*out = append(*out, "<#"+str(x["channel_id"])+">")
		}
		for k, e := range x {
			if s, ok := e.(string); ok {
				if k == "text" || k == "title" || k == "details" || k == "output" {
					*out = append(*out, s)
				}
				continue
			}
			shownTexts(e, out)
		}
	}
}

// wroteLocked runs the checks on a message the app just wrote (posted,
// updated, streamed to): with Options.ForbidMentions, live mention syntax
// in what it now shows is a Violation. s.mu must be held.
func (s *Server) wroteLocked(method string, m *msg) {
	if !s.Opts.ForbidMentions || m == nil {
		return
	}
	if live := s.toMessage(m).LiveMentions(); len(live) > 0 {
		s.violateLocked("%s: message %s now shows live mention syntax %q: %q", method, m.ts, live, truncateRunes(m.text, 300))
	}
}

// noUnfurlLocked: a bot's chat.postMessage must turn link and media
// previews off (unfurl_links=false, unfurl_media=false), or Slack fetches
// every URL in the text and shows what the page says about itself under
// the bot's name. It is the only posting method that takes them; an
// update keeps what the post set. s.mu must be held.
func (s *Server) noUnfurlLocked(method string, p params) {
	var missing []string
	for _, k := range []string{"unfurl_links", "unfurl_media"} {
		if !p.isFalse(k) {
			missing = append(missing, k+"=false")
		}
	}
	if len(missing) > 0 {
		s.violateLocked("%s without %s: Slack may fetch and preview the links in %q", method, strings.Join(missing, ", "), truncateRunes(p.str("text"), 100))
	}
}
