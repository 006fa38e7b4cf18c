package slackmd

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters/mdsplit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const z = "\u200b" // zero-width space, as inserted by the package

// toMrkdwnCases is TestToMrkdwn's table, grouped by the Markdown feature
// each case exercises; at package level so the test itself stays short.
var toMrkdwnCases = []struct {
	name, in, want string
}{
	// Inline formatting.
	{"bold stars", "a **b** c", "a *b* c"},
	{"bold underscores", "a __b__ c", "a *b* c"},
	{"em star", "a *b* c", "a _b_ c"},
	{"em underscore", "a _b_ c", "a _b_ c"},
	{"bold italic", "***both***", "_*both*_"},
	{"em inside bold", "**a _b_ c**", "*a _b_ c*"},
	{"bold inside bold flattened", "**a **b** c**", "*a b c*"},
	{"strike", "~~gone~~", "~gone~"},
	{"strike single tilde", "~gone~", "~gone~"},
	{"code span", "run `make test`", "run `make test`"},
	{"code span escapes", "`a<b && c>d`", "`a&lt;b &amp;&amp; c&gt;d`"},
	{"code span double backticks", "``a ` b``", "`a ` b`"},
	{"code span keeps stars", "`*x*`", "`*x*`"},
	{"bold across soft break", "**one\ntwo**", "*one*\n*two*"},
	{"intraword underscores stay", "snake_case_name", "snake_case_name"},

	// Links and images.
	{"link", "[docs](https://example.com/docs)", "<https://example.com/docs|docs>"},
	{"link with title", `[docs](https://x.org "T")`, "<https://x.org|docs>"},
	{"link ampersand", "[q](https://x.org/?a=1&b=2)", "<https://x.org/?a=1&amp;b=2|q>"},
	{"link label escapes", "[a <b> & c](https://x.org)", "<https://x.org|a &lt;b&gt; &amp; c>"},
	{"link label formatting flattened", "[**b** `c`](https://x.org)", "<https://x.org|b c>"},
	{"link pipe in url", "[p](https://x.org/a|b)", "<https://x.org/a%7Cb|p>"},
	{"link angle dest with space", "[s](<https://x.org/a b>)", "<https://x.org/a%20b|s>"},
	{"link label equals url", "[https://x.org](https://x.org)", "<https://x.org>"},
	{"empty label", "[](https://x.org)", "<https://x.org>"},
	{"reference link", "[the spec][s]\n\n[s]: https://spec.example.org", "<https://spec.example.org|the spec>"},
	{"mailto", "[mail me](mailto:a@b.org)", "<mailto:a@b.org|mail me>"},
	{"relative link", "[main.go](src/main.go#L10)", "main.go (src/main.go#L10)"},
	{"anchor link", "[up](#top)", "up (#top)"},
	{"autolink", "<https://example.com/x?y=1&z=2>", "<https://example.com/x?y=1&amp;z=2>"},
	{"autolink email", "<ops@example.com>", "<mailto:ops@example.com|ops@example.com>"},
	{"bare url", "see https://example.com/a_b now", "see <https://example.com/a_b> now"},
	{"bare www", "www.example.com", "<http://www.example.com|www.example.com>"},
	{"image", "![chart](https://x.org/c.png)", "<https://x.org/c.png|chart>"},
	{"image no alt", "![](https://x.org/c.png)", "<https://x.org/c.png>"},
	{"link in bold", "**[x](https://x.org)**", "*<https://x.org|x>*"},
	{"link to mention is not a link", "[x](<!here>)", "x (!here)"},
	{"link to user is not a link", "[x](@U123)", "x (@U123)"},

	// Headings.
	{"h1", "# Title", "*Title*"},
	{"h3 with bold", "### The **big** one", "*The big one*"},
	{"setext", "Title\n=====", "*Title*"},
	{"heading then text", "## Head\ntext", "*Head*\n\ntext"},
	{"heading with code", "# Use `go test`", "*Use `go test`*"},

	// Blocks.
	{"paragraphs", "one\n\ntwo", "one\n\ntwo"},
	{"soft break", "one\ntwo", "one\ntwo"},
	{"hard break spaces", "one  \ntwo", "one\ntwo"},
	{"hard break backslash", "one\\\ntwo", "one\ntwo"},
	{"thematic break", "a\n\n---\n\nb", "a\n\n───\n\nb"},
	{"thematic break stars", "***", "───"},
	{"blockquote", "> a\n> b", "> a\n> b"},
	{"blockquote paragraphs", "> a\n>\n> b", "> a\n> b"},
	{"blockquote lazy", "> a\nb", "> a\n> b"},
	{"nested blockquote flattened", "> a\n>> b\n>>> c", "> a\n> b\n> c"},
	{"blockquote in list", "- item\n\n  > quoted\n- next", "• item\n\n> quoted\n\n• next"},
	{"list in blockquote", "> - a\n>   - b", "> • a\n>     ◦ b"},
	{"blockquote code", "> ```\n> x\n> ```", "> ```\n> x\n> ```"},

	// Lists.
	{"bullets", "- a\n- b", "• a\n• b"},
	{"star bullets", "* a\n* b", "• a\n• b"},
	{"nested bullets", "- a\n  - b\n    - c\n      - d", "• a\n    ◦ b\n        ▪ c\n            ▪ d"},
	{"ordered", "1. a\n2. b", "1. a\n2. b"},
	{"ordered start", "3. a\n4. b", "3. a\n4. b"},
	{"ordered paren", "1) a\n2) b", "1) a\n2) b"},
	{"ordered nested bullet", "1. a\n   - b\n2. c", "1. a\n    ◦ b\n2. c"},
	{"loose list", "- a\n\n- b", "• a\n\n• b"},
	{"item continuation", "- a\n  b", "• a\n  b"},
	{"ordered continuation", "10. a\n    b", "10. a\n    b"},
	{"item paragraphs", "1. a\n\n   more\n2. b", "1. a\n\n   more\n\n2. b"},
	{"item code block", "- run:\n\n  ```sh\n  make\n  ```", "• run:\n\n```\nmake\n```"},
	{"item starting with code", "- ```\n  x\n  ```", "•\n```\nx\n```"},
	{"empty item", "-\n- b", "•\n• b"},
	{"task list", "- [ ] todo\n- [x] done", "• ☐ todo\n• ☑ done"},
	{"list after paragraph", "Steps:\n\n- a", "Steps:\n\n• a"},

	// Code.
	{"fenced", "```\nx := 1\n```", "```\nx := 1\n```"},
	{"fenced language dropped", "```go\nx := 1\n```", "```\nx := 1\n```"},
	{"fenced tilde", "~~~python\nprint(1)\n~~~", "```\nprint(1)\n```"},
	{"fenced verbatim", "```\n**not bold** [x](y) _z_\n\ttab\n```", "```\n**not bold** [x](y) _z_\n\ttab\n```"},
	{"fenced escapes", "```\nif a < b && c > d {}\n```", "```\nif a &lt; b &amp;&amp; c &gt; d {}\n```"},
	{"fenced blank lines kept", "```\na\n\n\nb\n```", "```\na\n\n\nb\n```"},
	{"fenced inner fence broken", "````md\n```go\nx\n```\n````", "```\n``" + z + "`go\nx\n``" + z + "`\n```"},
	{"fenced empty", "```\n```", "```\n```"},
	{"fenced unclosed", "```\nx", "```\nx\n```"},
	{"indented", "    a\n    b", "```\na\nb\n```"},
	{"code after text", "text\n```\ncode\n```", "text\n\n```\ncode\n```"},

	// Tables.
	{"table", "| a | bb |\n|---|---|\n| 1 | 2 |", "```\n| a | bb |\n|---|----|\n| 1 | 2  |\n```"},
	{"table alignment", "| l | c | r |\n|:--|:-:|--:|\n| x | y | z |\n| long | long | long |",
		"```\n| l    |  c   |    r |\n|------|------|------|\n| x    |  y   |    z |\n| long | long | long |\n```"},
	{"table inline content", "| h |\n|---|\n| **b** `c` [l](https://x.org) &amp; <x> |",
		"```\n| h                           |\n|-----------------------------|\n| b c l (https://x.org) &amp; &lt;x&gt; |\n```"},
	{"table wide runes", "| k | v |\n|---|---|\n| 日本 | x |\n| ab | y |", "```\n| k    | v |\n|------|---|\n| 日本 | x |\n| ab   | y |\n```"},
	{"table missing cells", "| a | b |\n|---|---|\n| 1 |", "```\n| a | b |\n|---|---|\n| 1 |   |\n```"},
	{"table escaped pipe", "| a |\n|---|\n| x \\| y |", "```\n| a     |\n|-------|\n| x | y |\n```"},

	// HTML.
	{"inline html", "press <kbd>C</kbd>", "press &lt;kbd&gt;C&lt;/kbd&gt;"},
	{"html block", "<div>\nhi\n</div>", "&lt;div&gt;\nhi\n&lt;/div&gt;"},
	{"html comment", "<!-- note -->", "&lt;!-- note --&gt;"},

	// Escaping.
	{"entities", "AT&amp;T &copy; &#35; &#x1F600;", "AT&amp;T © # 😀"},
	{"bare ampersand and angles", "a < b > c & d", "a &lt; b &gt; c &amp; d"},
	{"backslash escapes", `\*x\* \_y\_ \# \<z\>`, "*" + z + "x* _" + z + "y_ # &lt;z&gt;"},
	{"literal stars not bold", `2 \* 3 \* 4, a\*b\*c, *.go and *.ts`, "2 * 3 * 4, a*b*c, *.go and *.ts"},
	{"literal tildes", "~/a and ~/b", "~/a and ~/b"},
	{"literal strike pair", `\~x\~`, "~" + z + "x~"},
	{"literal backticks", "\\`x\\` and \\`y", "`" + z + "x`" + z + " and `" + z + "y"},
	{"escaped quote marker", `\> not a quote`, z + "&gt; not a quote"},
	{"escaped entity stays literal", `\&amp;`, "&amp;amp;"},
	{"literal triple backticks", "a ``` b", "a `" + z + "`" + z + "`" + z + " b"},
	{"nul", "a\x00b", "a\uFFFDb"},
	{"crlf", "# H\r\n\r\na\r\nb\r\n\r\n```\r\nx\r\ny\r\n```\r\n", "*H*\n\na\nb\n\n```\nx\ny\n```"},
	{"footnote", "a[^n] b[^m]\n\n[^n]: first\n[^m]: **second**", "a[1] b[2]\n\n[1] first\n[2] *second*"},
	{"undefined footnote stays text", "a[^x]", "a[^x]"},
	{"emoji shortcode kept", ":tada: done", ":tada: done"},
	{"empty", "", ""},
	{"blank", "\n\n  \n", ""},
}

func TestToMrkdwn(t *testing.T) {
	for _, tt := range toMrkdwnCases {
		t.Run(tt.name, func(t *testing.T) {
			got := ToMrkdwn(tt.in)
			if got != tt.want {
				t.Errorf("ToMrkdwn(%q)\n got: %q\nwant: %q", tt.in, got, tt.want)
			}
			assertNoLiveSyntax(t, got)
		})
	}
}

func TestToMrkdwnMentionsInert(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"channel", "<!channel>", "&lt;!channel&gt;"},
		{"here", "hi <!here> all", "hi &lt;!here&gt; all"},
		{"everyone", "<!everyone>", "&lt;!everyone&gt;"},
		{"user", "<@U0123ABCD>", "&lt;@U0123ABCD&gt;"},
		{"user with label", "<@U0123|alice>", "&lt;@U0123|alice&gt;"},
		{"channel ref", "<#C0123|general>", "&lt;#C0123|general&gt;"},
		{"subteam", "<!subteam^S1|@ops>", "&lt;!subteam^S1|@ops&gt;"},
		{"date", "<!date^1392734382^{date}|Feb 18>", "&lt;!date^1392734382^{date}|Feb 18&gt;"},
		{"slack link syntax", "<https://evil.example|click me>", "&lt;https://evil.example|click me&gt;"},
		{"in code span", "`<!here> <@U1>`", "`&lt;!here&gt; &lt;@U1&gt;`"},
		{"in code block", "```\n<!channel>\n```", "```\n&lt;!channel&gt;\n```"},
		{"in bold", "**<!here>**", "*&lt;!here&gt;*"},
		{"in link label", "[<!here>](https://x.org)", "<https://x.org|&lt;!here&gt;>"},
		{"entity encoded", "&lt;!here&gt; &#60;!channel&#62;", "&lt;!here&gt; &lt;!channel&gt;"},
		{"html comment like", "<!here>", "&lt;!here&gt;"},
		{"bare channel", "@channel look", "@" + z + "channel look"},
		{"bare here", "ping @here", "ping @" + z + "here"},
		{"bare everyone", "@everyone", "@" + z + "everyone"},
		{"bare any case", "@Channel @HERE @EveryOne", "@" + z + "Channel @" + z + "HERE @" + z + "EveryOne"},
		{"bare in code span", "`@here`", "`@" + z + "here`"},
		{"bare in code block", "```\necho @channel\n```", "```\necho @" + z + "channel\n```"},
		{"bare in link label", "[@here](https://x.org)", "<https://x.org|@" + z + "here>"},
		{"bare in heading", "# @channel", "*@" + z + "channel*"},
		{"bare in table", "| h |\n|---|\n| @here |", "```\n| h     |\n|-------|\n| @" + z + "here |\n```"},
		{"entity built", "&#64;here", "@" + z + "here"},
		{"split by escape", `@\here`, `@\here`},
		{"url keeps at", "[p](https://x.org/@here)", "<https://x.org/@here|p>"},
		{"other mentions untouched", "@alice @channels", "@alice @" + z + "channels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToMrkdwn(tt.in)
			if got != tt.want {
				t.Errorf("ToMrkdwn(%q)\n got: %q\nwant: %q", tt.in, got, tt.want)
			}
			assertNoLiveSyntax(t, got)
		})
	}
}

// liveLink matches what ToMrkdwn may legitimately emit between '<' and '>':
// a link to an absolute URL, with an optional label.
var liveLink = regexp.MustCompile(`^<[A-Za-z][A-Za-z0-9+.\-]*:[^<>|\s]*(\|[^<>]*)?>`)

// assertNoLiveSyntax parses mrkdwn output for '<': every one must open a
// link that came from a Markdown link (scheme URL), so no "<!", "<@", "<#"
// and no mention can appear; bare broadcast mentions must be broken.
func assertNoLiveSyntax(t *testing.T, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		if out[i] != '<' {
			continue
		}
		m := liveLink.FindString(out[i:])
		if m == "" {
			t.Fatalf("output has a '<' that is not a link at %d: %q", i, out[i:min(len(out), i+40)])
		}
		i += len(m) - 1
	}
	for _, bad := range []string{"<!", "<@", "<#"} {
		if strings.Contains(out, bad) {
			t.Fatalf("output contains %q: %q", bad, out)
		}
	}
	if broadcast.MatchString(stripLinks(out)) {
		t.Fatalf("output contains a live broadcast mention: %q", out)
	}
}

var broadcast = regexp.MustCompile(`(?i)@(channel|here|everyone)`)

func stripLinks(s string) string {
	return regexp.MustCompile(`<[^<>|]*`).ReplaceAllString(s, "<")
}

func TestToMrkdwnGolden(t *testing.T) {
	for _, name := range []string{"constructs", "long-markdown"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".md"))
			if err != nil {
				t.Fatal(err)
			}
			got := ToMrkdwn(string(in))
			assertNoLiveSyntax(t, got)
			golden(t, filepath.Join("testdata", name+".mrkdwn.golden"), got)
		})
	}
}

// TestSplitGolden splits ToMrkdwn's rendering of the long answer as the
// Slack adapter does (with mdsplit.Split, whose own tests check its
// invariants); every part must stay within the limit and free of live
// mention syntax.
func TestSplitGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "long-markdown.md"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, limit := range []int{1500} {
		parts := mdsplit.Split(ToMrkdwn(string(in)), limit)
		if len(parts) < 2 {
			t.Fatalf("limit %d: %d parts, want several", limit, len(parts))
		}
		for i, p := range parts {
			n := utf8.RuneCountInString(p)
			if n > limit {
				t.Errorf("limit %d: part %d has %d runes", limit, i+1, n)
			}
			assertNoLiveSyntax(t, p)
			fmt.Fprintf(&b, "===== part %d/%d (%d runes, limit %d) =====\n%s\n", i+1, len(parts), n, limit, p)
		}
	}
	golden(t, filepath.Join("testdata", "long-markdown.split-1500.golden"), b.String())
}

// TestLongMarkdownFixtureCopy checks that testdata/long-markdown.md is the
// `result` of the last line of the recorded CLI transcript.
func TestLongMarkdownFixtureCopy(t *testing.T) {
	path := filepath.Join("..", "..", "..", "claudeproc", "testdata", "cli-2.1.330", "long-markdown.ndjson")
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("fixture not available: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	var last string
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			last = sc.Text()
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Type   string `json:"type"`
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(last), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "result" || msg.Result == "" {
		t.Fatalf("last line is not a result: type %q", msg.Type)
	}
	copied, err := os.ReadFile(filepath.Join("testdata", "long-markdown.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(copied) != msg.Result {
		if *update {
			if err := os.WriteFile(filepath.Join("testdata", "long-markdown.md"), []byte(msg.Result), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatal("testdata/long-markdown.md differs from the fixture's result; run with -update")
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (run with -update to accept):\n%s", path, firstDiff(string(want), got))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g || i >= len(wl) || i >= len(gl) {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + w + "\n got: " + g
		}
	}
	return ""
}

func TestToMrkdwnConcurrent(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "constructs.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := ToMrkdwn(string(in))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := ToMrkdwn(string(in)); got != want {
					t.Error("concurrent ToMrkdwn gave a different result")
					return
				}
			}
		}()
	}
	wg.Wait()
}
