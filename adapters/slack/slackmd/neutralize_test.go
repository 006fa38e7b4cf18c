package slackmd

import (
	"strings"
	"testing"
)

func TestNeutralize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain markdown untouched", "# T\n\n**b** [x](https://x.org) `c` a < b & c > d", "# T\n\n**b** [x](https://x.org) `c` a < b & c > d"},
		{"autolink untouched", "<https://x.org> <mailto:a@b.org>", "<https://x.org> <mailto:a@b.org>"},
		{"channel", "<!channel>", "<" + z + "!channel>"},
		{"here", "hi <!here|here> all", "hi <" + z + "!here|here> all"},
		{"everyone", "<!everyone>", "<" + z + "!everyone>"},
		{"subteam", "<!subteam^S1|@ops>", "<" + z + "!subteam^S1|@ops>"},
		{"user", "<@U0123ABCD>", "<" + z + "@U0123ABCD>"},
		{"channel ref", "<#C0123|general>", "<" + z + "#C0123|general>"},
		{"html comment also", "<!-- x -->", "<" + z + "!-- x -->"},
		{"in code span", "`<!here>`", "`<" + z + "!here>`"},
		{"in fenced code", "```\n<@U1> @channel\n```", "```\n<" + z + "@U1> @" + z + "channel\n```"},
		{"bare", "@channel @here @everyone", "@" + z + "channel @" + z + "here @" + z + "everyone"},
		{"bare any case", "@HERE @Channel", "@" + z + "HERE @" + z + "Channel"},
		{"other at", "@alice a@b.org @ here", "@alice a@b.org @ here"},
		{"entities left alone", "&lt;!here&gt;", "&lt;!here&gt;"},
		{"lone lt at end", "a <", "a <"},
		{"lone at at end", "a @", "a @"},
		{"at prefix of word", "@heretic", "@" + z + "heretic"},
		{"multibyte around", "é<!here>✓@here😀", "é<" + z + "!here>✓@" + z + "here😀"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Neutralize(tt.in)
			if got != tt.want {
				t.Errorf("Neutralize(%q)\n got: %q\nwant: %q", tt.in, got, tt.want)
			}
			// Nothing but U+200B was added.
			if strings.ReplaceAll(got, z, "") != strings.ReplaceAll(tt.in, z, "") {
				t.Errorf("Neutralize changed more than inserting U+200B: %q", got)
			}
			for _, bad := range []string{"<!", "<@", "<#"} {
				if strings.Contains(got, bad) {
					t.Errorf("output still contains %q", bad)
				}
			}
			if broadcast.MatchString(got) {
				t.Errorf("output still contains a broadcast mention: %q", got)
			}
			if again := Neutralize(got); again != got {
				t.Errorf("Neutralize is not idempotent: %q", again)
			}
		})
	}
}

func FuzzNeutralize(f *testing.F) {
	for _, s := range []string{"<!here>", "@channel", "<@U1|x>", "a<#C1>b", "@@here<<!!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := Neutralize(in)
		if strings.ReplaceAll(got, z, "") != strings.ReplaceAll(in, z, "") {
			t.Fatalf("Neutralize changed more than inserting U+200B: %q -> %q", in, got)
		}
		for _, bad := range []string{"<!", "<@", "<#"} {
			if strings.Contains(got, bad) {
				t.Fatalf("output contains %q: %q", bad, got)
			}
		}
		if broadcast.MatchString(got) {
			t.Fatalf("output contains a broadcast mention: %q", got)
		}
	})
}

func FuzzToMrkdwn(f *testing.F) {
	for _, s := range []string{"**b** <!here> [x](https://x.org)", "- a\n  - b", "| a |\n|---|\n| <@U1> |", "```\n@channel\n```", "<!subteam^S1|@ops>", "[x](<!here>)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		assertNoLiveSyntax(t, ToMrkdwn(in))
	})
}

// mentionForms are every form of Slack mention syntax a model could write.
var mentionForms = []string{
	"<!here>", "<!here|here>", "<!channel>", "<!channel|channel>", "<!everyone>", "<!everyone|everyone>",
	"<@U0BOB00001>", "<@U0BOB00001|bob>", "<#C0GENERAL1>", "<#C0GENERAL1|general>",
	"<!subteam^S0OPS|@ops>", "@here", "@channel", "@everyone", "@HERE", "@Channel",
}

// streamOut is what a stream shows after text arrived in pieces: each
// piece sends Neutralize(Settled(text so far)) minus what was sent, the
// last one the rest of Neutralize(text).
func streamOut(t *testing.T, pieces []string) string {
	t.Helper()
	var text, sent string
	for i, p := range pieces {
		text += p
		target := Settled(text)
		if i == len(pieces)-1 {
			target = text
		}
		out := Neutralize(target)
		if !strings.HasPrefix(out, sent) {
			t.Fatalf("pieces %q: %q does not extend what was sent, %q", pieces, out, sent)
		}
		sent = out
	}
	return sent
}

// TestSettledStream: a mention cut across two or three pieces at every
// byte never shows live once the pieces are put together, and the result
// is exactly Neutralize of the whole text.
func TestSettledStream(t *testing.T) {
	for _, form := range mentionForms {
		text := "before " + form + " after"
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				got := streamOut(t, []string{text[:i], text[i:j], text[j:]})
				if got != Neutralize(text) {
					t.Fatalf("cut at %d, %d: %q, want %q", i, j, got, Neutralize(text))
				}
				if live := liveIn(got); live != "" {
					t.Fatalf("cut at %d, %d: live %q in %q", i, j, live, got)
				}
			}
		}
	}
}

func liveIn(s string) string {
	for _, bad := range []string{"<!", "<@", "<#"} {
		if strings.Contains(s, bad) {
			return bad
		}
	}
	return broadcast.FindString(s)
}

func TestSettled(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"a":            "a",
		"a <":          "a ",
		"a @":          "a ",
		"a @he":        "a ",
		"a @HeR":       "a ",
		"a @here":      "a @here",
		"a @her!":      "a @her!",
		"a @everyon":   "a ",
		"a @@":         "a @",
		"a @alice":     "a @alice",
		"mail x@chan":  "mail x",
		"<!he":         "<!he",
		"é@":           "é",
		"a <@":         "a <",
		"@here and @c": "@here and ",
	} {
		if got := Settled(in); got != want {
			t.Errorf("Settled(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSettled: for any text and any continuation, the neutralised settled
// start is a start of the neutralised whole, and settling is monotonic.
func FuzzSettled(f *testing.F) {
	for _, s := range []string{"a @he", "re", "<", "!here>", "@@", "ch", "x<@", "U1>"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		s := Settled(a)
		if !strings.HasPrefix(a, s) {
			t.Fatalf("Settled(%q) = %q is not a start of it", a, s)
		}
		if !strings.HasPrefix(Neutralize(a+b), Neutralize(s)) {
			t.Fatalf("Neutralize(Settled(%q)) = %q is not a start of Neutralize(%q) = %q", a, Neutralize(s), a+b, Neutralize(a+b))
		}
		if !strings.HasPrefix(Settled(a+b), s) {
			t.Fatalf("Settled(%q) = %q does not start with Settled(%q) = %q", a+b, Settled(a+b), a, s)
		}
	})
}
