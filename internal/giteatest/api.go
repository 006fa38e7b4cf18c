package giteatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// Repo is a repository on the server.
type Repo struct {
	Owner, Name   string
	DefaultBranch string
}

// FullName is owner/name.
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// PullRequest is what Gitea's API says of a pull request.
type PullRequest struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"` // open, closed
	Draft  bool   `json:"draft"`
	URL    string `json:"html_url"`
	Head   struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

// Comment is a comment on an issue or a pull request's conversation.
type Comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

// APIURL is the base of Gitea's REST API (http://…/api/v1).
func (s *Server) APIURL() string { return s.URL + "/api/v1" }

// CreateRepo makes a public repository of the admin's with an initial
// commit (a README) on its default branch, main.
func (s *Server) CreateRepo(t testing.TB, name string) Repo {
	t.Helper()
	var out struct {
		Name          string `json:"name"`
		DefaultBranch string `json:"default_branch"`
		Owner         struct {
			Login string `json:"login"`
		} `json:"owner"`
	}
	body := map[string]any{"name": name, "auto_init": true, "readme": "Default", "default_branch": "main"}
	s.API(t, "POST", "/user/repos", body, &out)
	return Repo{Owner: out.Owner.Login, Name: out.Name, DefaultBranch: out.DefaultBranch}
}

// CloneURL is r's HTTP URL with the admin's token in it, for the test's
// own git (which may push with it).
func (s *Server) CloneURL(r Repo) string {
	u, _ := url.Parse(s.URL)
	u.User = url.UserPassword(s.Admin, s.Token)
	u.Path = "/" + r.FullName() + ".git"
	return u.String()
}

// PullRequests lists r's pull requests, open and closed, newest first.
func (s *Server) PullRequests(t testing.TB, r Repo) []PullRequest {
	t.Helper()
	var prs []PullRequest
	s.API(t, "GET", "/repos/"+r.FullName()+"/pulls?state=all&limit=50", nil, &prs)
	return prs
}

// Comments lists the comments on r's issue or pull request number.
func (s *Server) Comments(t testing.TB, r Repo, number int64) []Comment {
	t.Helper()
	var cs []Comment
	s.API(t, "GET", fmt.Sprintf("/repos/%s/issues/%d/comments", r.FullName(), number), nil, &cs)
	return cs
}

// API makes a request of the REST API as the admin (path below /api/v1),
// sending in as JSON when not nil and decoding the answer into out when
// not nil; anything but a 2xx fails the test.
func (s *Server) API(t testing.TB, method, path string, in, out any) {
	t.Helper()
	if err := s.request(method, path, in, out, false); err != nil {
		t.Fatalf("gitea: %v", err)
	}
}

// request is API without a test, authenticated by the token or, before
// there is one, by the admin's password.
func (s *Server) request(method, path string, in, out any, basic bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.APIURL()+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if basic {
		req.SetBasicAuth(s.Admin, s.Password)
	} else {
		req.Header.Set("Authorization", "token "+s.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decoding %q: %w", method, path, data, err)
		}
	}
	return nil
}
