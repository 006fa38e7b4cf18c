package slackmd

import (
	"strings"
	"testing"
)

// checkCodeBlock: the block opens and closes where CodeBlock put its
// fences and nowhere else, nothing in it is live, and it reads as s.
func checkCodeBlock(t *testing.T, s string) {
	t.Helper()
	got := CodeBlock(s)
	inner, ok := strings.CutPrefix(got, "```\n")
	inner, ok2 := strings.CutSuffix(inner, "\n```")
	if !ok || !ok2 {
		t.Fatalf("not a code block: %q", got)
	}
	if strings.Contains(inner, "```") {
		t.Fatalf("the content can close the block: %q", inner)
	}
	assertNoLiveSyntax(t, got)
	back := strings.NewReplacer(z, "", "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(inner)
	if back != strings.ReplaceAll(s, z, "") {
		t.Fatalf("CodeBlock(%q) reads %q", s, back)
	}
}

func TestCodeBlock(t *testing.T) {
	for _, s := range []string{
		"$ make deploy",
		"echo done\n```\n*forged* text outside <!here>\n```\nrm -rf /",
		"<@U0BOB00001> <!channel> @here @everyone & <#C1|x>",
		"````` five", "ends with a tick`", "`` ` ``",
		"",
	} {
		checkCodeBlock(t, s)
	}
}

func FuzzCodeBlock(f *testing.F) {
	for _, s := range []string{"```", "a\n```\n<!here>", "@channel", "&lt;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkCodeBlock(t, s) })
}

func TestText(t *testing.T) {
	got := Text("Bash wants to run: ping @here <!channel> *now* & ```")
	assertNoLiveSyntax(t, got)
	if strings.Contains(got, "```") || !strings.Contains(got, "&amp;") {
		t.Errorf("Text: %q", got)
	}
}
