package triggers

import (
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakegithub"
	"github.com/claudeops/claudeops/store"
)

// describedFile has a trigger for each GitHub event issue 30 names, as an
// operator would filter it.
const describedFile = `triggers:
  - name: gh-issue
    kind: github
    channel: console/main
    secret_file: SECRET
    repos: [acme/api]
    on:
      - { event: issues, action: labeled, label: claude }
    per_hour: 10
    prompt: "Issue {{.issue.number}}: {{.issue.title}}\n{{.issue.body}}"
  - name: gh-check
    kind: github
    channel: console/main
    secret_file: SECRET
    repos: [acme/api]
    on:
      - { event: check_run, action: completed, state: failure }
    per_hour: 10
    prompt: "Check {{.check_run.name}} failed on {{.check_run.head_sha}}"
  - name: gh-pr
    kind: github
    channel: console/main
    secret_file: SECRET
    repos: [acme/api]
    on:
      - { event: pull_request, action: opened }
    per_hour: 10
    prompt: "Review pull request {{.number}}: {{.pull_request.title}}"
`

// describedServer serves describedFile's triggers with a real store.
func describedServer(t *testing.T) (*httptest.Server, *runs) {
	t.Helper()
	dir := t.TempDir()
	sec := filepath.Join(dir, "secret")
	if err := os.WriteFile(sec, []byte(testSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := Parse([]byte(strings.ReplaceAll(describedFile, "SECRET", sec)), os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rs := &runs{}
	h := New(t.Context(), Config{Triggers: ts, Records: st, Runner: rs})
	mux := http.NewServeMux()
	mux.Handle("POST /triggers/{name}", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Wait)
	return srv, rs
}

// githubSigned is a delivery to trigger name as GitHub makes one.
func githubSigned(name, event, delivery string, body []byte) req {
	return req{name: name, body: string(body), header: map[string]string{
		"X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
		"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(Sign([]byte(testSecret), body)),
	}}
}

// TestGitHubEventsAsDescribed: the events the triggers take, as GitHub's
// published webhook description has their payloads (every field it
// requires, each field the trigger reads where GitHub puts it: checked
// strictly by fakegithub) — an issue labelled claude, a failed check run,
// a pull request opened — start runs whose prompts hold the event's
// fields; another label and a passed check are ignored.
func TestGitHubEventsAsDescribed(t *testing.T) {
	w := fakegithub.DescribeWebhooks(t)
	repo := map[string]any{"full_name": "acme/api", "name": "api"}
	tests := []struct {
		name, trigger, event, action string
		fields                       map[string]any
		status                       int
		prompt                       string // a part of the run's prompt; "": no run
	}{
		{"issue labelled claude", "gh-issue", "issues", "labeled", map[string]any{"repository": repo, "label": map[string]any{"name": "claude"},
			"issue": map[string]any{"number": 7, "title": "Crash on start", "body": "It crashes at once."}}, 202, "Issue 7: «Crash on start»\n«It crashes at once.»"},
		{"issue labelled otherwise", "gh-issue", "issues", "labeled", map[string]any{"repository": repo, "label": map[string]any{"name": "bug"},
			"issue": map[string]any{"number": 8, "title": "Other"}}, 200, ""},
		{"check run failed", "gh-check", "check_run", "completed", map[string]any{"repository": repo,
			"check_run": map[string]any{"name": "ci", "conclusion": "failure", "head_sha": "51ebbf79e9"}}, 202, "Check «ci» failed on «51ebbf79e9»"},
		{"check run passed", "gh-check", "check_run", "completed", map[string]any{"repository": repo,
			"check_run": map[string]any{"name": "ci", "conclusion": "success"}}, 200, ""},
		{"pull request opened", "gh-pr", "pull_request", "opened", map[string]any{"repository": repo, "number": 5,
			"pull_request": map[string]any{"number": 5, "title": "Add a parser"}}, 202, "Review pull request 5: «Add a parser»"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rs := describedServer(t)
			body := w.Payload(t, tc.event, tc.action, tc.fields)
			if code, text := githubSigned(tc.trigger, tc.event, "d-1", body).send(t, srv); code != tc.status {
				t.Fatalf("answer %d %q, want %d", code, text, tc.status)
			}
			if tc.prompt == "" {
				waitRuns(t, rs, 0)
				return
			}
			waitRuns(t, rs, 1)
			if p := rs.fired[0].Prompt; !strings.Contains(p, tc.prompt) {
				t.Errorf("prompt %q; want it to hold %q", p, tc.prompt)
			}
		})
	}
}

// TestGitHubReviewsAsDescribed: a comment on the conversation of the
// bot's pull request #4 and a review of it, as GitHub's webhook
// description has them, are posted into the thread that opened it, with
// their author and text.
func TestGitHubReviewsAsDescribed(t *testing.T) {
	w := fakegithub.DescribeWebhooks(t)
	const page = "https://github.com/acme/api/pull/4"
	repo := map[string]any{"full_name": "acme/api", "name": "api"}
	tests := []struct {
		name, event, action string
		fields              map[string]any
		what, author, body  string
	}{
		{"comment", "issue_comment", "created", map[string]any{"repository": repo,
			"issue":   map[string]any{"number": 4, "html_url": page, "pull_request": map[string]any{"html_url": page}},
			"comment": map[string]any{"body": "Can you add a test?", "user": map[string]any{"login": "octocat"}}},
			"Comment", "octocat", "Can you add a test?"},
		{"review", "pull_request_review", "submitted", map[string]any{"repository": repo,
			"pull_request": map[string]any{"number": 4, "html_url": page},
			"review":       map[string]any{"state": "approved", "body": "Looks right.", "user": map[string]any{"login": "hubot"}}},
			"Review (approved)", "hubot", "Looks right."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, ps, _ := newReviewServer(t)
			body := w.Payload(t, tc.event, tc.action, tc.fields)
			if code, text := githubSigned("gh-reviews", tc.event, "g-1", body).send(t, srv); code != 202 {
				t.Fatalf("answer %d %q, want 202", code, text)
			}
			got := ps.taken()
			if len(got) != 1 || got[0].What != tc.what || got[0].Author != tc.author || got[0].Body != tc.body || got[0].PR != page || got[0].Number != 4 {
				t.Fatalf("posted %+v; want one %s by %s", got, tc.what, tc.author)
			}
		})
	}
}
