package bot

import (
	"slices"
	"testing"
)

// TestAddEnv: an extension's variables join the session's environment
// only where the operator's (CLAUDEOPS_CLAUDE_ENV) does not name them.
func TestAddEnv(t *testing.T) {
	tests := []struct {
		name            string
		env, more, want []string
	}{
		{"added", []string{"PATH=/bin"}, []string{"GIT_AUTHOR_NAME=Bot"}, []string{"PATH=/bin", "GIT_AUTHOR_NAME=Bot"}},
		{"the operator's wins", []string{"GIT_AUTHOR_NAME=Ops"}, []string{"GIT_AUTHOR_NAME=Bot"}, []string{"GIT_AUTHOR_NAME=Ops"}},
		{"the first of more wins", nil, []string{"A=1", "A=2"}, []string{"A=1"}},
		{"nothing more", []string{"A=1"}, nil, []string{"A=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addEnv(slices.Clone(tt.env), tt.more); !slices.Equal(got, tt.want) {
				t.Errorf("addEnv(%q, %q) = %q, want %q", tt.env, tt.more, got, tt.want)
			}
		})
	}
}
