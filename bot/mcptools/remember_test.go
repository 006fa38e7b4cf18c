package mcptools

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRemember: the tool hands the thread a plain one-line fact and stores
// nothing itself; what is empty or over the bound is an error the model can
// act on, and nothing is proposed; without Env.Propose there is no tool.
func TestRemember(t *testing.T) {
	var got []string
	var fail error
	s := New(Env{Propose: func(_ context.Context, fact string) error {
		if fail != nil {
			return fail
		}
		got = append(got, fact)
		return nil
	}})
	for _, tt := range []struct {
		name, fact, want string
		isErr            bool
		proposed         string
	}{
		{"plain", "deploys go through\n\nthe release\tbranch", "not stored", false, "deploys go through the release branch"},
		{"hidden characters out", "a\u202eb\u200dc", "not stored", false, "abc"},
		{"empty", " \n\t ", "the fact is empty", true, ""},
		{"over the bound", strings.Repeat("é", MaxProposal+1), "over 500 characters", true, ""},
		{"at the bound", strings.Repeat("é", MaxProposal), "not stored", false, strings.Repeat("é", MaxProposal)},
	} {
		got = nil
		text, isErr := callTool(t, s, rememberName, map[string]string{"fact": tt.fact})
		if isErr != tt.isErr || !strings.Contains(text, tt.want) {
			t.Errorf("%s: %q (error %v), want %q (error %v)", tt.name, text, isErr, tt.want, tt.isErr)
		}
		if p := strings.Join(got, "|"); p != tt.proposed {
			t.Errorf("%s: proposed %q, want %q", tt.name, p, tt.proposed)
		}
	}
	fail = errors.New("the thread is closing")
	if text, isErr := callTool(t, s, rememberName, map[string]string{"fact": "x"}); !isErr || !strings.Contains(text, "could not be shown") {
		t.Errorf("a proposal the thread cannot take: %q %v", text, isErr)
	}
	for _, tl := range New(Env{}).tools() {
		if tl.Name == rememberName {
			t.Error("remember is offered where nothing takes proposals")
		}
	}
}
