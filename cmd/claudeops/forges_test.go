package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/forge"
)

const testForgeToken = "s3cr3t-forge-token-4242"

func TestForgesConfig(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(testForgeToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig([]string{
		"CLAUDEOPS_FORGE_TOKEN_FILE=" + tok,
		"CLAUDEOPS_FORGES=https://git.example.com/=gitea:https://git.example.com,https://git.example.com/team/=gitea:https://team.example.com;token_file=" + tok,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		repo string
		want forge.Repo
		ok   bool
	}{
		{"https://git.example.com/acme/api.git", forge.Repo{Owner: "acme", Name: "api"}, true},
		{"https://git.example.com/team/acme/web", forge.Repo{Owner: "acme", Name: "web"}, true},
		{"https://bot:pushtoken@git.example.com/acme/api.git", forge.Repo{Owner: "acme", Name: "api"}, true},
		{"https://other.example.com/acme/api.git", forge.Repo{}, false},
		{"/srv/git/api.git", forge.Repo{}, false},
	} {
		_, r, ok := c.forges.ForgeOf(tc.repo)
		if ok != tc.ok || r != tc.want {
			t.Errorf("ForgeOf(%s) = %v, %v; want %v, %v", tc.repo, r, ok, tc.want, tc.ok)
		}
	}
	if s := fmt.Sprintf("%+v %#v", c.forges, c.forges); strings.Contains(s, testForgeToken) {
		t.Errorf("the configuration prints the token: %s", s)
	}
}

func TestForgesConfigProblems(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig([]string{
		"CLAUDEOPS_FORGES=nonsense,https://a.example/=github:https://a.example,https://b.example/=gitea:ftp://b.example," +
			"https://c.example/=gitea:https://c.example,https://d.example/=gitea:https://d.example;token_file=" + empty,
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"want <clone URL prefix>=gitea:", `forge "github" is not supported`, "the API base URL must be", "https://c.example/: no token", "is empty"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problems lack %q:\n%s", want, msg)
		}
	}
}
