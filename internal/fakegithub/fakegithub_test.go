package fakegithub

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// do sends a request to the fake's API as a client would; v: the reply.
func do(t *testing.T, s *Server, method, path, token string, body any) (int, any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: %d %q is not JSON", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, v
}

// TestDescriptionRefuses: GitHub's own description, through the checker,
// refuses the bodies and queries GitHub would not take as meant.
func TestDescriptionRefuses(t *testing.T) {
	d := Describe(t)
	tests := []struct {
		method, path, query, body string
		want                      string // a part of a problem; "": none
	}{
		{"POST", "/repos/o/r/pulls", "", `{"head":"b","base":"main","title":"t","body":"x","draft":true}`, ""},
		{"POST", "/repos/o/r/pulls", "", `{"head":"b","title":"t"}`, `lacks "base"`},
		{"POST", "/repos/o/r/pulls", "", `{"head":"b","base":"main","draft":"yes"}`, "$.draft: a string where the schema wants boolean"},
		{"POST", "/repos/o/r/pulls", "", `{"head":"b","base":"main","labels":["x"]}`, `"labels" is not a property the schema names`},
		{"POST", "/repos/o/r/pulls", "", ``, "no request body"},
		{"PATCH", "/repos/o/r/pulls/1", "", `{"title":"t","draft":false}`, `"draft" is not a property`},
		{"PATCH", "/repos/o/r/pulls/1", "", `{"state":"merged"}`, `"merged" is not one of`},
		{"PATCH", "/repos/o/r/pulls/1", "", ``, ""},
		{"POST", "/repos/o/r/issues/1/comments", "", `{}`, `lacks "body"`},
		{"GET", "/repos/o/r/pulls", "state=open&head=o:b&per_page=50&page=2", ``, ""},
		{"GET", "/repos/o/r/pulls", "state=merged", ``, `query parameter state: $: "merged" is not one of`},
		{"GET", "/repos/o/r/pulls", "per_page=many", ``, "query parameter per_page: $: a string where the schema wants integer"},
		{"GET", "/repos/o/r/pulls", "limit=5", ``, `query parameter "limit" is not one of pulls/list's`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.query+tt.body, func(t *testing.T) {
			op, ok := d.Find(tt.method, tt.path)
			if !ok {
				t.Fatalf("no operation %s %s", tt.method, tt.path)
			}
			q, _ := url.ParseQuery(tt.query)
			got := d.CheckRequest(op, q, []byte(tt.body))
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("%s refused %s: %q", op.ID, tt.body, got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("%s: problems %q; want one saying %q", op.ID, got, tt.want)
			}
		})
	}
	if op, _ := d.Find("GET", "/repos/o/r/pulls/comments"); op.ID != "pulls/list-review-comments-for-repo" {
		t.Errorf("a literal segment should win over {pull_number}: %s", op.ID)
	}
}

// TestFakeFlows: the operations a forge client calls, over HTTP, each
// reply checked against the description by the fake itself (no problem
// left at the end); a reply that drifted would be caught (a pull request
// without its head).
func TestFakeFlows(t *testing.T) {
	s := Start(t)
	s.CreateRepo("acme", "api", "")
	st, pr := do(t, s, "POST", "/repos/acme/api/pulls", s.Token, map[string]any{"head": "acme:feature", "base": "main", "title": "T", "body": "B", "draft": true})
	if st != 201 || pr.(map[string]any)["number"] != 1.0 || pr.(map[string]any)["draft"] != true {
		t.Fatalf("create: %d %v", st, pr)
	}
	st, again := do(t, s, "POST", "/repos/acme/api/pulls", s.Token, map[string]any{"head": "feature", "base": "main", "title": "T2"})
	if msg := errorMessage(again); st != 422 || msg != "A pull request already exists for acme:feature." {
		t.Fatalf("second open from one head: %d %v", st, again)
	}
	st, list := do(t, s, "GET", "/repos/acme/api/pulls?state=open&head=acme:feature", s.Token, nil)
	if st != 200 || len(list.([]any)) != 1 {
		t.Fatalf("list: %d %v", st, list)
	}
	if _, none := do(t, s, "GET", "/repos/acme/api/pulls?head=feature", s.Token, nil); len(none.([]any)) != 0 {
		t.Fatalf("a head without its owner matched: %v", none)
	}
	st, upd := do(t, s, "PATCH", "/repos/acme/api/pulls/1", s.Token, map[string]any{"title": "T3", "body": "B3", "base": "main"})
	if st != 200 || upd.(map[string]any)["title"] != "T3" || upd.(map[string]any)["draft"] != true {
		t.Fatalf("update: %d %v", st, upd)
	}
	if st, _ := do(t, s, "POST", "/repos/acme/api/issues/1/comments", s.Token, map[string]any{"body": "hi"}); st != 201 {
		t.Fatalf("comment: %d", st)
	}
	if st, _ := do(t, s, "GET", "/repos/acme/api/pulls/1", s.Token, nil); st != 200 {
		t.Fatalf("get: %d", st)
	}
	if st, _ := do(t, s, "GET", "/repos/acme/none/pulls/1", s.Token, nil); st != 404 {
		t.Fatalf("get in a repository that is not there: %d", st)
	}
	prs := s.PullRequests("acme", "api")
	if len(prs) != 1 || prs[0].Title != "T3" || prs[0].Body != "B3" || !prs[0].Draft || len(prs[0].Comments) != 1 || prs[0].Comments[0].Body != "hi" {
		t.Fatalf("state: %+v", prs)
	}
	if p := s.TakeProblems(); len(p) > 0 {
		t.Fatalf("the fake's checks found: %q", p)
	}

	op, _ := s.d.Find("GET", "/repos/acme/api/pulls/1")
	s.mu.Lock()
	drifted := s.pull(s.repos["acme/api"], s.repos["acme/api"].pulls[0], true)
	s.mu.Unlock()
	delete(drifted, "head")
	b, _ := json.Marshal(drifted)
	if got := s.d.CheckResponse(op, 200, b); len(got) != 1 || !strings.Contains(got[0], `lacks "head"`) {
		t.Fatalf("a pull request without its head: %q", got)
	}
}

func errorMessage(v any) string {
	errs, _ := v.(map[string]any)["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	m, _ := errs[0].(map[string]any)["message"].(string)
	return m
}

// TestFakeRefuses: no token or another one is answered 401 and changes
// nothing; a body the description refuses is answered 422 and recorded as
// a problem; a path outside the description or the fake's operations
// too.
func TestFakeRefuses(t *testing.T) {
	s := Start(t)
	s.CreateRepo("acme", "api", "")
	body := map[string]any{"head": "feature", "base": "main", "title": "T"}
	for _, tok := range []string{"", "ghp_other"} {
		if st, v := do(t, s, "POST", "/repos/acme/api/pulls", tok, body); st != 401 {
			t.Fatalf("token %q: %d %v", tok, st, v)
		}
	}
	if len(s.PullRequests("acme", "api")) != 0 || len(s.TakeProblems()) != 0 {
		t.Fatal("a refused request changed something or was a problem")
	}
	if st, _ := do(t, s, "POST", "/repos/acme/api/pulls", s.Token, map[string]any{"head": "feature", "base": "main", "draft": "yes"}); st != 422 {
		t.Fatalf("a body the schema refuses: %d", st)
	}
	if p := s.TakeProblems(); len(p) != 1 || !strings.Contains(p[0], "draft") {
		t.Fatalf("problems %q", p)
	}
	do(t, s, "GET", "/no/such/thing", s.Token, nil)
	do(t, s, "PUT", "/repos/acme/api/pulls/1/merge", s.Token, map[string]any{})
	if p := s.TakeProblems(); len(p) != 2 || !strings.Contains(p[0], "no such operation") || !strings.Contains(p[1], "pulls/merge is in the description but the fake does not serve it") {
		t.Fatalf("problems %q", p)
	}
}

// TestFakeGitBranches: with a bare repository behind it, the fake opens
// only from a branch that is there and ahead of the base, and shows the
// branch's commit (git's, the oracle) as the head's sha.
func TestFakeGitBranches(t *testing.T) {
	s := Start(t)
	dir := t.TempDir()
	bare, work := filepath.Join(dir, "api.git"), filepath.Join(dir, "w")
	git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	git(t, dir, "init", "-q", "-b", "main", work)
	os.WriteFile(filepath.Join(work, "f"), []byte("1\n"), 0o644)
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "one")
	git(t, work, "push", "-q", bare, "main", "main:same")
	os.WriteFile(filepath.Join(work, "f"), []byte("2\n"), 0o644)
	git(t, work, "commit", "-q", "-am", "two")
	git(t, work, "push", "-q", bare, "HEAD:feature")
	sha := strings.TrimSpace(git(t, work, "rev-parse", "HEAD"))
	s.CreateRepo("acme", "api", bare)
	tests := []struct {
		head, base string
		status     int
		want       string
	}{
		{"none", "main", 422, `"field":"head"`},
		{"feature", "none", 422, `"field":"base"`},
		{"same", "main", 422, "No commits between main and same"},
		{"feature", "main", 201, `"sha":"` + sha + `"`},
	}
	for _, tt := range tests {
		st, v := do(t, s, "POST", "/repos/acme/api/pulls", s.Token, map[string]any{"head": tt.head, "base": tt.base, "title": "T"})
		b, _ := json.Marshal(v)
		if st != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s into %s: %d %s; want %d with %s", tt.head, tt.base, st, b, tt.status, tt.want)
		}
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestWebhookPayloads: the payloads of the events the triggers take, made
// from GitHub's webhook description with the fields a test sets, pass its
// strict check; a field put where GitHub has none, or of the wrong type,
// does not.
func TestWebhookPayloads(t *testing.T) {
	w := DescribeWebhooks(t)
	repo := map[string]any{"full_name": "acme/api", "name": "api"}
	for _, tc := range []struct {
		event, action string
		fields        map[string]any
	}{
		{"issues", "labeled", map[string]any{"label": map[string]any{"name": "claude"}, "repository": repo,
			"issue": map[string]any{"number": 7, "title": "Crash on start", "body": "it crashes"}}},
		{"check_run", "completed", map[string]any{"repository": repo, "check_run": map[string]any{"name": "ci", "conclusion": "failure"}}},
		{"pull_request", "opened", map[string]any{"number": 5, "repository": repo, "pull_request": map[string]any{"title": "Add a thing"}}},
		{"issue_comment", "created", map[string]any{"repository": repo, "comment": map[string]any{"body": "Can you add a test?"},
			"issue": map[string]any{"number": 4, "pull_request": map[string]any{"html_url": "https://github.com/acme/api/pull/4"}}}},
		{"pull_request_review", "submitted", map[string]any{"repository": repo, "review": map[string]any{"state": "approved", "body": "Fine"},
			"pull_request": map[string]any{"number": 4, "html_url": "https://github.com/acme/api/pull/4"}}},
	} {
		t.Run(tc.event+"-"+tc.action, func(t *testing.T) {
			b := w.Payload(t, tc.event, tc.action, tc.fields)
			if !strings.Contains(string(b), `"full_name":"acme/api"`) {
				t.Errorf("the payload lacks the repository: %s", b)
			}
		})
	}
	bad := []struct {
		name, event, action, body, want string
	}{
		{"misplaced", "check_run", "completed", `{"conclusion":"failure"}`, `"conclusion" is not a property`},
		{"wrong type", "issues", "labeled", `{"issue":{"number":"7"}}`, "$.issue.number: a string where the schema wants integer"},
		{"no such event", "issues", "exploded", `{}`, "no webhook issues-exploded"},
	}
	for _, tc := range bad {
		got := strings.Join(w.Check(tc.event, tc.action, []byte(tc.body)), "\n")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q; want one saying %q", tc.name, got, tc.want)
		}
	}
}
