package slackmd

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// destination returns the unescaped destination of a link or image.
func destination(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Link:
		return unescapeMarkdown(n.Destination)
	case *ast.Image:
		return unescapeMarkdown(n.Destination)
	}
	return ""
}

func autoLinkURL(n *ast.AutoLink, src []byte) (url, label string) {
	url = string(n.URL(src))
	label = string(n.Label(src))
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(url), "mailto:") {
		url = "mailto:" + url
	}
	return url, label
}

// plainEmailRE is what an e-mail address worth linking looks like.
var plainEmailRE = regexp.MustCompile(`^[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+$`)

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]{0,31}:`)

// link renders a link as <url|label>. resolve says whether dest is a
// Markdown link destination (backslash escapes and entities to resolve)
// rather than an autolink's literal URL. Without a URL scheme (a relative
// path, an anchor, or something like "!here" or "@U123" that Slack would
// read as a mention) no link is made: the text is "label (dest)".
func (r *renderer) link(dest []byte, label string, resolve bool) string {
	raw := string(dest)
	if resolve {
		raw = unescapeMarkdown(dest)
	}
	label = strings.TrimSpace(strings.Join(strings.Fields(label), " "))
	if !schemeRE.MatchString(raw) {
		switch {
		case raw == "":
			return esc(label)
		case label == "" || label == raw:
			return esc(raw)
		default:
			return esc(label) + " (" + esc(raw) + ")"
		}
	}
	url := slackURL(util.URLEscape(dest, resolve))
	if label == "" || label == raw {
		return "<" + url + ">"
	}
	return "<" + url + "|" + neutralizeBroadcasts(esc(label)) + ">"
}

// slackURL makes an (already percent-encoded) URL safe inside <…|…>: '&'
// becomes &amp; as Slack expects, and the characters that would end the
// URL part ('<', '>', '|') and blanks are percent-encoded.
func slackURL(u []byte) string {
	var b strings.Builder
	b.Grow(len(u) + 8)
	for _, c := range u {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("%3C")
		case '>':
			b.WriteString("%3E")
		case '|':
			b.WriteString("%7C")
		case ' ':
			b.WriteString("%20")
		case '\n', '\r', '\t':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
