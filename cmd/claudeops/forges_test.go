package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/internal/fakegithub"
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
		"CLAUDEOPS_FORGES=https://git.example.com/=gitea:https://git.example.com,https://git.example.com/team/=gitea:https://team.example.com;token_file=" + tok +
			",https://github.com/=github:https://api.github.com,git@github.com:=github:https://api.github.com" +
			",https://ghe.example.com/=github:https://ghe.example.com/api/v3;token_file=" + tok,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		repo string
		want forge.Repo
		kind string // the forge's type; "" for none
	}{
		{"https://git.example.com/acme/api.git", forge.Repo{Owner: "acme", Name: "api"}, "*forge.Gitea"},
		{"https://git.example.com/team/acme/web", forge.Repo{Owner: "acme", Name: "web"}, "*forge.Gitea"},
		{"https://bot:pushtoken@git.example.com/acme/api.git", forge.Repo{Owner: "acme", Name: "api"}, "*forge.Gitea"},
		{"https://github.com/acme/api.git", forge.Repo{Owner: "acme", Name: "api"}, "*forge.GitHub"},
		{"git@github.com:acme/api.git", forge.Repo{Owner: "acme", Name: "api"}, "*forge.GitHub"},
		{"https://x-access-token:ghs_x@github.com/acme/web", forge.Repo{Owner: "acme", Name: "web"}, "*forge.GitHub"},
		{"https://ghe.example.com/platform/api.git", forge.Repo{Owner: "platform", Name: "api"}, "*forge.GitHub"},
		{"https://other.example.com/acme/api.git", forge.Repo{}, ""},
		{"/srv/git/api.git", forge.Repo{}, ""},
	} {
		f, r, ok := c.forges.ForgeOf(tc.repo)
		kind := ""
		if ok {
			kind = fmt.Sprintf("%T", f)
		}
		if ok != (tc.kind != "") || r != tc.want || kind != tc.kind {
			t.Errorf("ForgeOf(%s) = %s %v, %v; want %s %v", tc.repo, kind, r, ok, tc.kind, tc.want)
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
		"CLAUDEOPS_FORGES=nonsense,https://a.example/=gitlab:https://a.example,https://b.example/=gitea:ftp://b.example," +
			"https://c.example/=gitea:https://c.example,https://d.example/=gitea:https://d.example;token_file=" + empty +
			",https://e.example/=github:https://e.example/api/v3;tokenfile=x,https://f.example/=github:https://me:pw@f.example/api/v3",
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"want <clone URL prefix>=<gitea|github>:", `https://a.example/: forge "gitlab" is not supported (gitea, github)`,
		"https://b.example/: the API base URL must be", "https://c.example/: no token", "is empty",
		`https://e.example/: unknown option "tokenfile"`, "https://f.example/: the API base URL must be an http(s) URL without credentials"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problems lack %q:\n%s", want, msg)
		}
	}
}

// TestForgesConfigGitHub: a github entry's client talks to the API base
// URL it names (a GitHub Enterprise-style path, here the fake's, held to
// GitHub's REST description) with the token of its token file, for the
// repository its clone URL names.
func TestForgesConfigGitHub(t *testing.T) {
	s := fakegithub.Start(t)
	s.CreateRepo("acme", "api", "")
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(s.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig([]string{"CLAUDEOPS_FORGES=git@ghe.example.com:=github:" + s.URL + ";token_file=" + tok})
	if err != nil {
		t.Fatal(err)
	}
	f, repo, ok := c.forges.ForgeOf("git@ghe.example.com:acme/api.git")
	if !ok {
		t.Fatal("no forge for the repository")
	}
	pr, err := f.OpenOrUpdatePR(context.Background(), repo, "claudeops/x", "main", "T", "B", false)
	if err != nil {
		t.Fatal(err)
	}
	if prs := s.PullRequests("acme", "api"); len(prs) != 1 || prs[0].Number != pr.Number || prs[0].Head != "claudeops/x" {
		t.Fatalf("the fake's pull requests: %+v; opened %+v", prs, pr)
	}
}
