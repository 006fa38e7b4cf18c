package matrix

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/format"
	"maunium.net/go/mautrix/format/mdext"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/mdsplit"
)

// Sizes. A Matrix event is at most 65536 bytes; an edit carries the text
// twice (the fallback is kept short here) and HTML beside each, and in an
// encrypted room the content grows by a third as base64 ciphertext. Text is
// split into messages of partRunes, and a part whose edit would encode to
// more than maxContentBytes is split again.
const (
	partRunes       = 8000
	maxContentBytes = 40000
	fallbackRunes   = 300
)

// markdown renders Markdown to HTML with raw HTML escaped; mautrix's
// extensions (tables, strikethrough, spoilers). Its links and images are
// the model's to choose: content sanitizes what it renders.
var markdown = goldmark.New(format.Extensions, format.HTMLOptions, goldmark.WithExtensions(mdext.EscapeHTML, imagesAsLinks{}))

// imagesAsLinks renders a Markdown image as a link to it, named by its alt
// text: an image would load a URL of the model's choosing in every
// reader's client (and is no allowed tag).
type imagesAsLinks struct{}

func (imagesAsLinks) Extend(m goldmark.Markdown) {
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(imagesAsLinks{}, 0)))
}

func (imagesAsLinks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, renderImageLink)
}

func renderImageLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	name := altText(source, n)
	if name == "" {
		name = string(n.Destination)
	}
	dest := util.EscapeHTML(util.URLEscape(n.Destination, true))
	_, err := fmt.Fprintf(w, `<a href="%s">%s</a>`, dest, util.EscapeHTML([]byte(name)))
	return ast.WalkSkipChildren, err
}

// altText is the plain text of an image's description.
func altText(source []byte, n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Value(source))
		case *ast.String:
			b.Write(c.Value)
		default:
			b.WriteString(altText(source, c))
		}
	}
	return b.String()
}

var (
	// pillLinkRE finds links that clients show as pills (matrix.to and
	// matrix: URIs to users, rooms and events).
	pillLinkRE = regexp.MustCompile(`(?is)<a\s+href="((?:https://matrix\.to/|matrix:)[^"]*)"[^>]*>(.*?)</a>`)
	roomRE     = regexp.MustCompile(`(?i)@room\b`)
)

// neutralize makes @room inert for clients that still match it in bodies
// (a word joiner after the @); m.mentions is always sent empty as well.
func neutralize(s string) string {
	return roomRE.ReplaceAllStringFunc(s, func(m string) string { return "@\u2060" + m[1:] })
}

// content renders Markdown as a notice: the Markdown source as the plain
// body, HTML as formatted_body. Nobody is mentioned, and links that would
// show as pills are shown as plain text with their address.
func content(md string) *event.MessageEventContent {
	md = neutralize(md)
	c := &event.MessageEventContent{MsgType: event.MsgNotice, Body: md, Mentions: &event.Mentions{}}
	var b strings.Builder
	if err := markdown.Convert([]byte(md), &b); err != nil {
		return c // plain text still says everything
	}
	h := format.UnwrapSingleParagraph(b.String())
	h = pillLinkRE.ReplaceAllString(h, `$2 (<code>$1</code>)`)
	// Markdown from the model can still make links of any scheme and
	// images: only what the spec lets clients render leaves here.
	h = sanitizeHTML(h)
	if strings.TrimSpace(h) != strings.TrimSpace(htmlEscape(md)) {
		c.Format, c.FormattedBody = event.FormatHTML, h
	}
	return c
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// editContent is the m.replace of original with c: the whole new content in
// m.new_content, a short fallback for clients without edits.
func editContent(original id.EventID, c *event.MessageEventContent) *event.MessageEventContent {
	newContent := *c
	newContent.RelatesTo = nil
	e := &event.MessageEventContent{
		MsgType:    c.MsgType,
		Body:       "* " + adapters.Cut(c.Body, fallbackRunes),
		Mentions:   &event.Mentions{},
		NewContent: &newContent,
		RelatesTo:  (&event.RelatesTo{}).SetReplace(original),
	}
	return e
}

// fits reports whether the edit form of c stays within maxContentBytes.
func fits(c *event.MessageEventContent) bool { return fitsIn(c, maxContentBytes) }

// fitsIn reports whether the edit form of c stays within limit bytes.
func fitsIn(c *event.MessageEventContent, limit int) bool {
	b, err := json.Marshal(editContent("$x", c))
	return err == nil && len(b) <= limit
}

// part is one event's worth of a message: its Markdown and its content.
type part struct {
	md string
	c  *event.MessageEventContent
}

// split cuts Markdown into parts that each fit one event (also as an edit),
// without losing a character and keeping code blocks whole. Each part is
// rendered once, here.
func split(md string) []part {
	return splitAt(md, partRunes)
}

func splitAt(md string, limit int) []part {
	var out []part
	for _, p := range mdsplit.Split(md, limit) {
		if c := content(p); fits(c) || limit < 256 {
			out = append(out, part{md: p, c: c})
			continue
		}
		out = append(out, splitAt(p, limit/2)...)
	}
	return out
}

// code is s as inline code, whatever backticks it holds.
func code(s string) string { return format.SafeMarkdownCode(s) }

// escapeMD makes text literal in Markdown.
func escapeMD(s string) string { return format.EscapeMarkdown(s) }

// Tool inputs: a one-line input up to inlineInputRunes shows as inline
// code, any other as a code block; one over toolInputBytes shows its head,
// and goes up whole as a file.
const (
	inlineInputRunes = 200
	toolInputBytes   = 3000
)

// toolLine is one entry of a status message: "⚙ **Bash** `make test` ·
// 12s", with a longer input in a code block under it. file says whether
// the whole input of a long one went up as a file.
func toolLine(t *adapters.Tool, file bool) string {
	mark := map[adapters.ToolState]string{adapters.ToolRunning: "⚙️", adapters.ToolWaiting: "⏸️", adapters.ToolOK: "✓", adapters.ToolFailed: "✗", adapters.ToolDenied: "⊘"}[t.State]
	s := strings.Repeat("  ", t.Depth) + mark + " **" + escapeMD(t.Name) + "**"
	in := adapters.Visible(t.Input)
	inline := in != "" && !strings.Contains(in, "\n") && utf8.RuneCountInString(in) <= inlineInputRunes
	if inline {
		s += " " + code(in)
	}
	s += t.Tail(160, escapeMD)
	if in == "" || inline {
		return s
	}
	return s + "\n" + inputBlock(t.Input, file)
}

// longInput: the input does not fit a status line and goes up as a file.
func longInput(t *adapters.Tool) bool { return t != nil && len(t.Input) > toolInputBytes }

// inputBlock shows a tool's input as a code block, every line of it, or
// for a long one its head, marked.
func inputBlock(in string, file bool) string {
	if len(in) <= toolInputBytes {
		return strings.TrimSuffix(fence(adapters.Visible(in)), "\n")
	}
	h := adapters.Head(adapters.Visible(in), func(h string) bool { return len(h) <= toolInputBytes })
	where := "the whole input is in the file above"
	if !file {
		where = "the whole input could not be attached"
	}
	return fmt.Sprintf("%s_… cut here after %d of %d bytes: %s._", fence(h), len(h), len(in), where)
}

// messageMarkdown is what a non-streamed message shows.
func messageMarkdown(m adapters.Message) string {
	if m.Kind == adapters.KindNotice && m.Error {
		return "⚠️ " + m.Text
	}
	return m.Text
}
