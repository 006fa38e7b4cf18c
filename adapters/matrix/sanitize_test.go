package matrix

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"maunium.net/go/mautrix/format"
	"maunium.net/go/mautrix/format/mdext"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/testkit"
)

// hostile is what a model (or a file it read) may write, in the styles of
// OWASP's filter-evasion cheat sheet and known sanitizer bypasses. Each is
// model text (Markdown, raw HTML in it escaped by the renderer) and also
// HTML handed to the sanitizer directly, so the sanitizer is tested on
// markup the renderer would never let through. keep is text that must
// survive the direct sanitizing (tags go, their text stays).
var hostile = []struct {
	name, in, keep string
}{
	{"markdown javascript link", "[click](javascript:alert(1))", ""},
	{"mixed case scheme", "[click](JaVaScRiPt:alert(1))", ""},
	{"tab entity in scheme", "[click](java&#09;script:alert(1))", ""},
	{"decimal entity first letter", "[click](&#106;avascript:alert(1))", ""},
	{"hex entity first letter", "[click](&#x6A;avascript:alert(1))", ""},
	{"colon entity", "[click](javascript&colon;alert(1))", ""},
	{"decimal colon entity", "[click](javascript&#58;alert(1))", ""},
	{"leading space in destination", "[click]( javascript:alert(1))", ""},
	{"angle destination", "[click](<javascript:alert(1)>)", ""},
	{"autolink", "<javascript:alert(1)>", ""},
	{"data url", "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", ""},
	{"vbscript", "[click](vbscript:msgbox(1))", ""},
	{"protocol relative", "[click](//evil.example/x)", ""},
	{"relative path", "[click](/relative/path)", ""},
	{"reference link", "[click][r]\n\n[r]: javascript:alert(1)", ""},
	{"markdown image", "![pic](https://x.example/y.png)", ""},
	{"markdown image javascript", "![pic](javascript:alert(1))", ""},
	{"image inside link", "[![pic](https://x.example/y.png)](javascript:alert(1))", ""},
	{"img onerror", "<img src=x onerror=alert(1)>", ""},
	{"svg onload", "<svg onload=alert(1)>", ""},
	{"iframe", `<iframe src="javascript:alert(1)"></iframe>`, ""},
	{"style block", "<style>body{display:none}</style>gone", "gone"},
	{"script", "<script>alert(1)</script>after", "after"},
	{"double open script", "<<script>alert(1)//<</script>after", "after"},
	{"math mxss", "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", ""},
	{"html javascript link", `<a href="javascript:alert(1)">x</a>`, "x"},
	{"html leading space link", `<a href=" javascript:alert(1)">x</a>`, "x"},
	{"unquoted href", `<a href=javascript:alert(1)>x</a>`, "x"},
	{"newline in scheme", "<a href=\"java\nscript:alert(1)\">x</a>", "x"},
	{"null byte in scheme", "<a href=\"java\x00script:alert(1)\">x</a>", "x"},
	{"control char prefix", "<a href=\"\x01\x02javascript:alert(1)\">x</a>", "x"},
	{"decimal entities without semicolons", `<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">x</a>`, "x"},
	{"hex entities without semicolons", `<a href="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29">x</a>`, "x"},
	{"tab entity in html", `<IMG SRC="jav&#x09;ascript:alert('XSS');">`, ""},
	{"event handler on allowed tag", "<b onmouseover=alert(1)>bold</b>", "bold"},
	{"style attribute", `<div style="background:url(javascript:alert(1))">box</div>`, "box"},
	{"comment", "<!--<img src=x onerror=alert(1)>-->visible", "visible"},
	{"conditional comment", "<!--[if gte IE 4]><script>alert(1)</script><![endif]-->", ""},
	{"object", `<object data="javascript:alert(1)"></object>`, ""},
	{"details ontoggle", "<details open ontoggle=alert(1)><summary>s</summary>d</details>", "s"},
	{"form action", "<form action=javascript:alert(1)><button>go</button></form>", "go"},
	{"base href", `<base href="javascript:/">`, ""},
	{"meta refresh", `<meta http-equiv="refresh" content="0;url=javascript:alert(1)">`, ""},
	{"good link with onclick", `<a href="https://ok.example" onclick="alert(1)">ok</a>`, "ok"},
	{"title breaking quote", "[x](https://ok.example \"t\\\" onmouseover=\\\"alert(1)\")", ""},
	{"quote in destination", "[x](https://ok.example/\"><img src=x onerror=alert(1)>)", ""},
	{"svg xlink", `<p><svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg></p>`, "x"},
	{"inline code", "`<img src=x onerror=alert(1)>`", ""},
	{"fenced html", "```html\n<script>alert(1)</script>\n```", ""},
	{"fence info attribute", "```\" onmouseover=\"alert(1)\" x=\"\nx\n```", ""},
	{"fence info scheme", "```javascript:alert(1) class=x\ncode\n```", ""},
	{"noscript mxss", `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`, ""},
	{"textarea mxss", `<textarea><img title="</textarea><img src=x onerror=alert(1)>">`, ""},
	{"unclosed tags", "<b><i><a href=javascript:alert(1)>open", "open"},
	{"table in link", "<table><td><a href=javascript:alert(1)>cell", "cell"},
	{"mixed links", "[a](https://ok.example)[b](javascript:alert(1))", ""},
	{"spoiler reason quote", "||x\" onload=\"alert(1)|secret||", ""},
	{"code class", `<code class="language-go evil">c</code>`, "c"},
	{"font color", `<font color="red;background:url(x)" data-mx-color="#12345g">f</font>`, "f"},
	{"ol start", `<ol start="1 onclick=x"><li>i</li></ol>`, "i"},
	{"self closing script", "<script/>alert(1)</script>x", "x"},
	{"cdata", "<![CDATA[<img src=x onerror=alert(1)>]]>", ""},
	{"uppercase tags", `<A HREF="JAVASCRIPT:alert(1)">X</A><IMG SRC=x>`, "X"},
	{"duplicate href", `<a href="https://ok.example" href="javascript:alert(1)">d</a>`, "d"},
	{"soft hyphen scheme", "<a href=\"java\u00adscript:alert(1)\">x</a>", "x"},
	{"https without host", `<a href="https:javascript:alert(1)">x</a>`, "x"},
	{"deep blockquotes", strings.Repeat("> ", 150) + "deep", "deep"},
	{"deep html", strings.Repeat("<div>", 150) + "deep", "deep"},
	{"deep tables", strings.Repeat("<table><td>", 60) + "deep", "deep"},
	{"room ping", "@room <a href=javascript:alert(1)>@room</a>", "@room"},
}

// renderPaths are the ways model output becomes formatted_body: a message,
// a failure notice, each part of a long message, a tool line, an approval
// and a question prompt.
var renderPaths = map[string]func(string) []string{
	"text": func(s string) []string { return []string{content(s).FormattedBody} },
	"notice": func(s string) []string {
		return []string{content(messageMarkdown(adapters.Message{Kind: adapters.KindNotice, Error: true, Text: s})).FormattedBody}
	},
	"split": func(s string) []string {
		var out []string
		for _, p := range split(strings.Repeat(s+"\n\n", 3)) {
			out = append(out, p.c.FormattedBody)
		}
		return out
	},
	"tool": func(s string) []string {
		t := &adapters.Tool{Name: s, Input: s, State: adapters.ToolOK, Preview: s}
		return []string{content(toolLine(t, false)).FormattedBody}
	},
	"approval": func(s string) []string {
		p := adapters.Prompt{ID: "p", Kind: adapters.PromptApproval, Title: s, Tool: "Bash", Detail: s, Note: s,
			Choices: adapters.ApprovalChoices, State: adapters.PromptDecided, Outcome: s}
		return []string{content(promptMarkdown(p)).FormattedBody}
	},
	"question": func(s string) []string {
		p := adapters.Prompt{ID: "q", Kind: adapters.PromptQuestion, Title: s,
			Questions: []adapters.Question{{Text: s, Header: s, Options: []adapters.Option{{Label: s, Description: s}}}}}
		return []string{content(promptMarkdown(p)).FormattedBody}
	},
}

func TestHostileHTMLIsSanitized(t *testing.T) {
	if len(hostile) < 40 {
		t.Fatalf("%d payloads, want at least 40", len(hostile))
	}
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			out := sanitizeHTML(tc.in)
			if v := MatrixHTMLViolations(out); len(v) > 0 {
				t.Errorf("sanitized as HTML: %q\n  violations: %q", out, v)
			}
			if tc.keep != "" && !strings.Contains(textOf(out), tc.keep) {
				t.Errorf("sanitized as HTML, the text %q is lost: %q", tc.keep, out)
			}
			for path, render := range renderPaths {
				for _, h := range render(tc.in) {
					if v := MatrixHTMLViolations(h); len(v) > 0 {
						t.Errorf("%s: %q\n  violations: %q", path, h, v)
					}
				}
			}
		})
	}
}

// TestOracleSeesTheAttacks: every payload is hostile to a client without
// the sanitizer (as HTML, or as the renderer's output of the Markdown),
// and the oracle says so: a payload the oracle would pass anyway proves
// nothing above.
func TestOracleSeesTheAttacks(t *testing.T) {
	// Cases the sanitizer must get right that no client would mind as
	// they are: a code block's odd language, a quote the renderer escaped,
	// a second href a browser ignores, a link that is https after all.
	notAttacks := map[string]bool{"fence info attribute": true, "fence info scheme": true, "spoiler reason quote": true,
		"ol start": true, "duplicate href": true, "https without host": true}
	// The renderer as mautrix sets it up, without our image links.
	unsanitized := goldmark.New(format.Extensions, format.HTMLOptions, goldmark.WithExtensions(mdext.EscapeHTML))
	for _, tc := range hostile {
		if notAttacks[tc.name] {
			continue
		}
		var b strings.Builder
		if err := unsanitized.Convert([]byte(tc.in), &b); err != nil {
			t.Fatal(err)
		}
		if len(MatrixHTMLViolations(tc.in)) == 0 && len(MatrixHTMLViolations(b.String())) == 0 {
			t.Errorf("%s: the oracle finds nothing wrong in %q unsanitized (rendered %q)", tc.name, tc.in, b.String())
		}
	}
	for _, ok := range []string{
		`<a href="https://example.org/x?a=1&amp;b=2">x</a>`, `<a href="mailto:a@example.org">m</a>`, `<a href=" HTTPS://example.org">x</a>`,
		`<pre><code class="language-go">x</code></pre>`, `<ol start="3"><li>x</li></ol>`, `<span data-mx-spoiler="why">s</span>`,
		`<table><tr><td>x</td></tr></table>`, `<font color="#00ff00">g</font>`,
	} {
		if v := MatrixHTMLViolations(ok); len(v) > 0 {
			t.Errorf("the oracle refuses spec HTML %q: %q", ok, v)
		}
	}
}

// TestSanitizeKeepsWhatTheSpecAllows: the renderer's own formatting goes
// through whole; golden files show a rich and a hostile message's HTML.
func TestSanitizeKeepsWhatTheSpecAllows(t *testing.T) {
	rich := "# Deploy\n\n**bold** _it_ ~~gone~~ `code` ||spoiler||\nnext line\n\n" +
		"> quoted\n\n- one\n- two\n\n3. three\n4. four\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n" +
		"```go\nx := 1 // <b>&\n```\n\n---\n\n[docs](https://example.org/a?b=1&c=2) <mailto:ops@example.org> ![graph](https://example.org/g.png)"
	got := content(rich).FormattedBody
	if v := MatrixHTMLViolations(got); len(v) > 0 {
		t.Errorf("violations in the renderer's own HTML: %q", v)
	}
	for _, want := range []string{"<h1>Deploy</h1>", "<strong>bold</strong>", "<em>it</em>", "<del>gone</del>", "<code>code</code>",
		"<span data-mx-spoiler>spoiler</span>", "<br>", "<blockquote>", "<ul>", `<ol start="3">`, "<table>", "<th>a</th>",
		`<pre><code class="language-go">x := 1 // &lt;b&gt;&amp;`, "<hr>", `<a href="https://example.org/a?b=1&amp;c=2">docs</a>`,
		`<a href="mailto:ops@example.org">mailto:ops@example.org</a>`, `<a href="https://example.org/g.png">graph</a>`} {
		if !strings.Contains(got, want) {
			t.Errorf("lost %s", want)
		}
	}
	testkit.Golden(t, filepath.Join("testdata", "html-rich.html"), got+"\n")
	var b strings.Builder
	for _, tc := range hostile[:30] {
		b.WriteString(tc.in + "\n\n")
	}
	testkit.Golden(t, filepath.Join("testdata", "html-hostile.html"), content(b.String()).FormattedBody+"\n")
}

// TestSanitizeIsStable: sanitized HTML goes through again unchanged, and
// plain text still needs no HTML at all.
func TestSanitizeIsStable(t *testing.T) {
	for _, tc := range hostile {
		once := sanitizeHTML(tc.in)
		if twice := sanitizeHTML(once); twice != once {
			t.Errorf("%s: not stable:\n  %q\n  %q", tc.name, once, twice)
		}
	}
	for _, s := range []string{`it's "quoted" & <angled>`, "a < b > c"} {
		if c := content(s); c.Format != "" {
			t.Errorf("%q needs no HTML, got %q", s, c.FormattedBody)
		}
	}
}

// FuzzMatrixHTML: whatever the model writes, as Markdown or as HTML, no
// client finds anything off the list in what is sent.
func FuzzMatrixHTML(f *testing.F) {
	for _, tc := range hostile {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := sanitizeHTML(s)
		if v := MatrixHTMLViolations(out); len(v) > 0 {
			t.Fatalf("sanitizeHTML(%q) = %q: %q", s, out, v)
		}
		if again := sanitizeHTML(out); again != out {
			t.Fatalf("not stable: %q then %q", out, again)
		}
		if h := content(s).FormattedBody; len(MatrixHTMLViolations(h)) > 0 {
			t.Fatalf("content(%q) = %q: %q", s, h, MatrixHTMLViolations(h))
		}
	})
}
