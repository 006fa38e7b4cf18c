package matrix

import (
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The oracle for formatted_body: parse it as a browser does (the HTML5
// tree builder, inside a body) and check every node against the Matrix
// spec's list, written out here apart from sanitize.go, with link schemes
// read the way the WHATWG URL parser reads them. It shares no code with
// the sanitizer, so a bug there cannot hide itself here.

// specAttrs: the tags the Matrix client-server spec suggests clients
// permit (m.room.message msgtypes; font and strike from before v1.10),
// less img, which issue 11 drops; for each the attributes it may carry.
var specAttrs = map[string][]string{
	"font": {"data-mx-bg-color", "data-mx-color", "color"},
	"span": {"data-mx-bg-color", "data-mx-color", "data-mx-spoiler", "data-mx-maths"},
	"a":    {"name", "target", "href"},
	"ol":   {"start"},
	"code": {"class"},
	"div":  {"data-mx-maths"},
	"del":  nil, "h1": nil, "h2": nil, "h3": nil, "h4": nil, "h5": nil, "h6": nil,
	"blockquote": nil, "p": nil, "ul": nil, "sup": nil, "sub": nil, "li": nil,
	"b": nil, "i": nil, "u": nil, "strong": nil, "em": nil, "s": nil, "strike": nil,
	"hr": nil, "br": nil, "table": nil, "thead": nil, "tbody": nil, "tr": nil,
	"th": nil, "td": nil, "caption": nil, "pre": nil, "details": nil, "summary": nil,
}

var oracleColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// MatrixHTMLViolations lists what in formatted_body s a client should not
// render: elements and attributes off the list, links whose scheme is not
// http, https or mailto (or that have none), comments, nesting over 100.
// Exported for the end-to-end tests in package matrix_test.
func MatrixHTMLViolations(s string) []string {
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(s), body)
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var v []string
	for _, n := range nodes {
		checkNode(n, 1, &v)
	}
	return v
}

func checkNode(n *html.Node, depth int, v *[]string) {
	switch n.Type {
	case html.ElementNode:
		checkElement(n, depth, v)
	case html.CommentNode:
		*v = append(*v, fmt.Sprintf("comment %q", n.Data))
	case html.DoctypeNode:
		*v = append(*v, "doctype")
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		checkNode(c, depth+1, v)
	}
}

func checkElement(n *html.Node, depth int, v *[]string) {
	allowed, ok := specAttrs[n.Data]
	if !ok || n.Namespace != "" {
		*v = append(*v, fmt.Sprintf("element <%s> (namespace %q)", n.Data, n.Namespace))
		return
	}
	if depth > 100 {
		*v = append(*v, fmt.Sprintf("<%s> nested %d deep", n.Data, depth))
	}
	for _, a := range n.Attr {
		if a.Namespace != "" || !contains(allowed, a.Key) {
			*v = append(*v, fmt.Sprintf("attribute %s:%s on <%s>", a.Namespace, a.Key, n.Data))
			continue
		}
		if bad := checkValue(n.Data, a.Key, a.Val); bad != "" {
			*v = append(*v, bad)
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func checkValue(tag, key, val string) string {
	switch key {
	case "href":
		if scheme, ok := browserScheme(val); !ok || (scheme != "http" && scheme != "https" && scheme != "mailto") {
			return fmt.Sprintf("<%s href=%q>: scheme %q", tag, val, scheme)
		}
	case "class":
		for _, c := range strings.Fields(val) {
			if !strings.HasPrefix(c, "language-") {
				return fmt.Sprintf("<%s class=%q>", tag, val)
			}
		}
	case "color", "data-mx-color", "data-mx-bg-color":
		if !oracleColor.MatchString(val) {
			return fmt.Sprintf("<%s %s=%q>", tag, key, val)
		}
	}
	return ""
}

// browserScheme reads a URL's scheme as the WHATWG URL parser does: C0
// controls and spaces around it and tabs and newlines anywhere are
// ignored; a scheme is an ASCII letter, then letters, digits, "+", "-" and
// ".", up to ":". ok is false for a URL without one (relative).
func browserScheme(href string) (scheme string, ok bool) {
	s := strings.TrimFunc(href, func(r rune) bool { return r <= ' ' })
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	if s == "" || !isAlpha(s[0]) {
		return "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return strings.ToLower(s[:i]), true
		case isAlpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.':
		default:
			return "", false
		}
	}
	return "", false
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// textOf is the text a client shows for s.
func textOf(s string) string {
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, _ := html.ParseFragment(strings.NewReader(s), body)
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return b.String()
}
