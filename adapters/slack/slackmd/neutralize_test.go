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
