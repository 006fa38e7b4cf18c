package fakegithub

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// repo is a repository the fake holds: its pull requests (numbered from 1)
// and, when it has one, the bare git repository its branches are in.
type repo struct {
	owner, name   string
	id            int64
	defaultBranch string
	gitDir        string
	created       time.Time
	pulls         []*PullRequest
}

func (r *repo) openCount() int {
	n := 0
	for _, p := range r.pulls {
		if p.State == "open" {
			n++
		}
	}
	return n
}

// PullRequest is a pull request as the fake holds it: the tests' oracle.
type PullRequest struct {
	Number, ID         int64
	Title, Body, State string // State: open or closed
	Draft              bool
	Head, Base         string // branch names
	HeadSHA, BaseSHA   string
	User               string // who opened it
	Created, Updated   time.Time
	Comments           []Comment
}

// Comment is a comment on a pull request's conversation.
type Comment struct {
	ID         int64
	Body, User string
	Created    time.Time
}

// CreateRepo adds owner/name, whose branches are those of the bare git
// repository gitDir ("" for none: any branch exists, no commit is
// compared), its default branch main.
func (s *Server) CreateRepo(owner, name, gitDir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.repos[strings.ToLower(owner+"/"+name)] = &repo{owner: owner, name: name, id: s.nextID,
		defaultBranch: "main", gitDir: gitDir, created: time.Now()}
}

// PullRequests is owner/name's pull requests, by number.
func (s *Server) PullRequests(owner, name string) []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(owner+"/"+name)]
	if r == nil {
		return nil
	}
	out := make([]PullRequest, len(r.pulls))
	for i, p := range r.pulls {
		out[i] = *p
		out[i].Comments = append([]Comment(nil), p.Comments...)
	}
	return out
}

// Open opens a pull request as someone other than the token's user would
// (through the site), with GitHub's rules; it fails the test when GitHub
// would refuse it.
func (s *Server) Open(owner, name, head, base, title string) PullRequest {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(owner+"/"+name)]
	if r == nil {
		s.t.Fatalf("fake GitHub: no repository %s/%s", owner, name)
	}
	p, refused := s.open(r, "someone-else", head, base, title, "", false)
	if refused != nil {
		s.t.Fatalf("fake GitHub: opening from %s: %v", head, refused)
	}
	return *p
}

func (s *Server) userID(login string) int64 {
	if id, ok := s.users[login]; ok {
		return id
	}
	s.nextID++
	s.users[login] = s.nextID
	return s.nextID
}

// call is one request to an operation.
type call struct {
	op    *Operation
	vars  map[string]string
	query url.Values
	body  []byte
}

// A handler answers a call: the status and the JSON body, which serve
// checks against the description before writing it.
type handler func(*Server, http.ResponseWriter, *call) (int, any)

var handlers = map[string]handler{
	"pulls/list":              (*Server).listPulls,
	"pulls/get":               (*Server).getPull,
	"pulls/create":            (*Server).createPull,
	"pulls/update":            (*Server).updatePull,
	"issues/create-comment":   (*Server).createComment,
	"users/get-authenticated": (*Server).authenticated,
}

// authenticated is the token's user, as "private-user".
func (s *Server) authenticated(w http.ResponseWriter, c *call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.user(s.Login)
	for k, v := range map[string]any{
		"user_view_type": "private", "name": nil, "company": nil, "blog": nil, "location": nil, "email": nil,
		"hireable": nil, "bio": nil, "public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
		"created_at": stamp(s.started), "updated_at": stamp(s.started), "private_gists": 0,
		"total_private_repos": 0, "owned_private_repos": 0, "disk_usage": 0, "collaborators": 0,
		"two_factor_authentication": true,
	} {
		u[k] = v
	}
	return http.StatusOK, u
}

// notFound is GitHub's 404.
var notFound = basicError(http.StatusNotFound, "Not Found")

// repoOf is the call's repository; nil: there is none (a 404).
func (s *Server) repoOf(c *call) *repo {
	return s.repos[strings.ToLower(c.vars["owner"]+"/"+c.vars["repo"])]
}

// pullOf is r's pull request the path's param numbers; nil: none.
func (s *Server) pullOf(c *call, r *repo, param string) *PullRequest {
	n, _ := strconv.ParseInt(c.vars[param], 10, 64)
	for _, p := range r.pulls {
		if p.Number == n {
			return p
		}
	}
	return nil
}

// listPulls: state (default open), head as owner:branch (a head without
// its owner matches nothing here), base, newest first unless
// direction=asc, paged by per_page (30, at most 100) and page with a Link
// header as GitHub's.
func (s *Server) listPulls(w http.ResponseWriter, c *call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoOf(c)
	if r == nil {
		return http.StatusNotFound, notFound
	}
	q := c.query
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var match []*PullRequest
	for _, p := range r.pulls {
		if (state == "all" || p.State == state) && headMatches(r, p, q["head"]) && (q.Get("base") == "" || q.Get("base") == p.Base) {
			match = append(match, p)
		}
	}
	sort.SliceStable(match, func(i, j int) bool { return match[i].Number > match[j].Number })
	if q.Get("direction") == "asc" {
		sort.SliceStable(match, func(i, j int) bool { return match[i].Number < match[j].Number })
	}
	per, page := intParam(q, "per_page", 30), intParam(q, "page", 1)
	per = min(max(per, 1), 100)
	page = max(page, 1)
	from, to := min((page-1)*per, len(match)), min(page*per, len(match))
	if to < len(match) {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("page", strconv.Itoa(page+1))
		next.Set("per_page", strconv.Itoa(per))
		w.Header().Set("Link", fmt.Sprintf(`<%s/repos/%s/%s/pulls?%s>; rel="next"`, s.URL, r.owner, r.name, next.Encode()))
	}
	out := make([]any, 0, to-from)
	for _, p := range match[from:to] {
		out = append(out, s.pull(r, p, false))
	}
	return http.StatusOK, out
}

func headMatches(r *repo, p *PullRequest, head []string) bool {
	if len(head) == 0 {
		return true
	}
	owner, ref, ok := strings.Cut(head[0], ":")
	return ok && strings.EqualFold(owner, r.owner) && ref == p.Head
}

func intParam(q url.Values, name string, def int) int {
	if n, err := strconv.Atoi(q.Get(name)); err == nil {
		return n
	}
	return def
}

func (s *Server) getPull(w http.ResponseWriter, c *call) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoOf(c)
	if r == nil {
		return http.StatusNotFound, notFound
	}
	p := s.pullOf(c, r, "pull_number")
	if p == nil {
		return http.StatusNotFound, notFound
	}
	return http.StatusOK, s.pull(r, p, true)
}

// createPull opens a pull request as the token's user, refusing what
// GitHub refuses with its 422s: no title, a head or base that is not a
// branch, no commits between them, and a second open pull request from
// one head into one base ("A pull request already exists for owner:head.").
func (s *Server) createPull(w http.ResponseWriter, c *call) (int, any) {
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
		Issue                   *int64
	}
	if err := decode(c.body, &in); err != nil {
		return http.StatusBadRequest, basicError(http.StatusBadRequest, "Problems parsing JSON")
	}
	if in.Issue != nil {
		s.problem("pulls/create: converting an issue is not served by the fake")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoOf(c)
	if r == nil {
		return http.StatusNotFound, notFound
	}
	p, refused := s.open(r, s.Login, in.Head, in.Base, in.Title, in.Body, in.Draft)
	if refused != nil {
		return http.StatusUnprocessableEntity, validationFailed(refused)
	}
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/%s/pulls/%d", s.URL, r.owner, r.name, p.Number))
	return http.StatusCreated, s.pull(r, p, true)
}

// open opens a pull request, or says what GitHub's 422 would (s.mu held).
func (s *Server) open(r *repo, user, head, base, title, body string, draft bool) (*PullRequest, obj) {
	if owner, ref, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(owner, r.owner) {
			return nil, obj{"resource": "PullRequest", "field": "head", "code": "invalid"}
		}
		head = ref
	}
	if strings.TrimSpace(title) == "" {
		return nil, obj{"resource": "PullRequest", "field": "title", "code": "missing_field"}
	}
	headSHA, ok := s.branch(r, head)
	if !ok {
		return nil, obj{"resource": "PullRequest", "field": "head", "code": "invalid"}
	}
	baseSHA, ok := s.branch(r, base)
	if !ok {
		return nil, obj{"resource": "PullRequest", "field": "base", "code": "invalid"}
	}
	if r.gitDir != "" && gitOut(r.gitDir, "rev-list", "--count", baseSHA+".."+headSHA) == "0" {
		return nil, obj{"resource": "PullRequest", "code": "custom", "message": "No commits between " + base + " and " + head}
	}
	for _, p := range r.pulls {
		if p.State == "open" && p.Head == head && p.Base == base {
			return nil, obj{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for " + r.owner + ":" + head + "."}
		}
	}
	s.nextID++
	now := time.Now()
	p := &PullRequest{Number: int64(len(r.pulls) + 1), ID: s.nextID, Title: title, Body: body, State: "open",
		Draft: draft, Head: head, Base: base, HeadSHA: headSHA, BaseSHA: baseSHA, User: user, Created: now, Updated: now}
	r.pulls = append(r.pulls, p)
	return p, nil
}

// branch is the commit of branch in r: from its git repository, or made
// up when it has none.
func (s *Server) branch(r *repo, branch string) (string, bool) {
	if branch == "" {
		return "", false
	}
	if r.gitDir == "" {
		sum := sha1.Sum([]byte(r.owner + "/" + r.name + ":" + branch))
		return hex.EncodeToString(sum[:]), true
	}
	sha := gitOut(r.gitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	return sha, sha != ""
}

// gitOut is git's output in the bare repository dir, trimmed; "" when it
// fails.
func gitOut(dir string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", append([]string{"--git-dir", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// updatePull changes title, body, base and state (open, closed); a draft
// stays one: GitHub's REST API has no way to mark it ready.
func (s *Server) updatePull(w http.ResponseWriter, c *call) (int, any) {
	var in struct {
		Title, Body, State, Base *string
	}
	if err := decode(c.body, &in); err != nil {
		return http.StatusBadRequest, basicError(http.StatusBadRequest, "Problems parsing JSON")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoOf(c)
	if r == nil {
		return http.StatusNotFound, notFound
	}
	p := s.pullOf(c, r, "pull_number")
	if p == nil {
		return http.StatusNotFound, notFound
	}
	if in.Base != nil && *in.Base != p.Base {
		sha, ok := s.branch(r, *in.Base)
		if !ok {
			return http.StatusUnprocessableEntity, validationFailed(obj{"resource": "PullRequest", "field": "base", "code": "invalid"})
		}
		p.Base, p.BaseSHA = *in.Base, sha
	}
	if in.Title != nil {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	if in.State != nil {
		p.State = *in.State
	}
	if sha, ok := s.branch(r, p.Head); ok {
		p.HeadSHA = sha // a push since: the pull request shows it
	}
	p.Updated = time.Now()
	return http.StatusOK, s.pull(r, p, true)
}

// createComment adds a comment to a pull request's conversation (its
// issue's: every pull request is an issue; the fake has no other issues).
func (s *Server) createComment(w http.ResponseWriter, c *call) (int, any) {
	var in struct{ Body string }
	if err := decode(c.body, &in); err != nil {
		return http.StatusBadRequest, basicError(http.StatusBadRequest, "Problems parsing JSON")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoOf(c)
	if r == nil {
		return http.StatusNotFound, notFound
	}
	p := s.pullOf(c, r, "issue_number")
	if p == nil {
		return http.StatusNotFound, notFound
	}
	s.nextID++
	cm := Comment{ID: s.nextID, Body: in.Body, User: s.Login, Created: time.Now()}
	p.Comments = append(p.Comments, cm)
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/%s/issues/comments/%d", s.URL, r.owner, r.name, cm.ID))
	return http.StatusCreated, s.comment(r, p.Number, cm)
}
