package forge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v84/github"
)

// GitHub is a Forge on GitHub or GitHub Enterprise Server, through
// google/go-github. Safe for concurrent use.
//
// Drafts: GitHub has a draft flag, set when the pull request opens. Its
// REST API cannot change it afterwards (marking a draft ready, or making
// an open one a draft, is GraphQL's or the page's), so an update leaves
// it as it is, and the PR returned says which it is.
type GitHub struct {
	api *url.URL
	c   *github.Client
	log *slog.Logger

	// self is the token's login once asked (Self).
	mu   sync.Mutex
	self string
}

// GitHubConfig configures NewGitHub.
type GitHubConfig struct {
	// URL is the API's base URL: https://api.github.com, or a GitHub
	// Enterprise Server's https://ghe.example.com/api/v3.
	URL   string
	Token Token // a token allowed to write the repositories' pull requests
	// HTTP is the client for the API; nil: one with a 30 s timeout. Its
	// transport is wrapped, not changed.
	HTTP *http.Client
	Log  *slog.Logger // nil: slog.Default()
}

// NewGitHub makes a GitHub client. It makes no request.
func NewGitHub(cfg GitHubConfig) (*GitHub, error) {
	api, err := url.Parse(cfg.URL)
	if cfg.URL == "" || err != nil || (api.Scheme != "https" && api.Scheme != "http") || api.Host == "" || api.User != nil {
		return nil, errors.New("github: the API's base URL must be an http(s) URL without credentials")
	}
	if cfg.Token.Empty() {
		return nil, errors.New("github: no token")
	}
	if !strings.HasSuffix(api.Path, "/") {
		api.Path += "/"
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	if cfg.HTTP != nil {
		copied := *cfg.HTTP
		hc = &copied
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = &bearer{api: api, token: cfg.Token, next: next}
	c := github.NewClient(hc)
	c.BaseURL, c.UploadURL = api, api
	c.UserAgent = "claudeops"
	g := &GitHub{api: api, c: c, log: cfg.Log}
	if g.log == nil {
		g.log = slog.Default()
	}
	return g, nil
}

var _ Forge = (*GitHub)(nil)

// bearer puts the token in the Authorization header of requests to the
// API's own scheme and host only. (go-github's WithAuthToken sets it on
// every request its transport sees, a redirect to another host's
// included.)
type bearer struct {
	api   *url.URL
	token Token
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != b.api.Scheme || !strings.EqualFold(req.URL.Host, b.api.Host) {
		return b.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token.value())
	return b.next.RoundTrip(req)
}

// OpenOrUpdatePR implements Forge. A draft is asked for on opening only
// (see GitHub).
func (g *GitHub) OpenOrUpdatePR(ctx context.Context, repo Repo, head, base, title, body string, draft bool) (PR, error) {
	if err := repo.check(); err != nil {
		return PR{}, err
	}
	if head == "" || base == "" || strings.TrimSpace(title) == "" {
		return PR{}, fmt.Errorf("github: pull request on %s: head, base and title are needed", repo)
	}
	open, found, err := g.find(ctx, repo, head)
	if err != nil {
		return PR{}, err
	}
	if found {
		return g.update(ctx, repo, open.Number, base, title, body)
	}
	np := &github.NewPullRequest{Title: &title, Head: &head, Base: &base, Body: &body}
	if draft {
		np.Draft = github.Ptr(true)
	}
	created, resp, err := g.c.PullRequests.Create(ctx, repo.Owner, repo.Name, np)
	if err != nil && resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
		// "A pull request already exists for owner:head.": opened by
		// someone else since find. Update that one instead.
		if pr, found, ferr := g.find(ctx, repo, head); ferr == nil && found {
			return g.update(ctx, repo, pr.Number, base, title, body)
		}
	}
	if err != nil {
		return PR{}, fmt.Errorf("github: opening a pull request from %s into %s on %s: %w", head, base, repo, err)
	}
	pr := fromGitHub(created)
	g.log.Info("pull request opened", "repo", repo.String(), "number", pr.Number, "head", head, "draft", pr.Draft)
	return pr, nil
}

func (g *GitHub) update(ctx context.Context, repo Repo, number int64, base, title, body string) (PR, error) {
	edited, _, err := g.c.PullRequests.Edit(ctx, repo.Owner, repo.Name, int(number), &github.PullRequest{
		Title: &title, Body: &body, Base: &github.PullRequestBranch{Ref: &base},
	})
	if err != nil {
		return PR{}, fmt.Errorf("github: updating pull request #%d on %s: %w", number, repo, err)
	}
	pr := fromGitHub(edited)
	g.log.Info("pull request updated", "repo", repo.String(), "number", pr.Number, "draft", pr.Draft)
	return pr, nil
}

// PRFor implements Forge.
func (g *GitHub) PRFor(ctx context.Context, repo Repo, head string) (PR, bool, error) {
	if err := repo.check(); err != nil {
		return PR{}, false, err
	}
	return g.find(ctx, repo, head)
}

// find asks for repo's open pull requests from owner:head (GitHub's head
// filter) and takes the one whose head is that branch of repo itself.
func (g *GitHub) find(ctx context.Context, repo Repo, head string) (PR, bool, error) {
	opts := &github.PullRequestListOptions{State: "open", Head: repo.Owner + ":" + head,
		ListOptions: github.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := g.c.PullRequests.List(ctx, repo.Owner, repo.Name, opts)
		if err != nil {
			return PR{}, false, fmt.Errorf("github: listing the open pull requests of %s: %w", repo, err)
		}
		for _, p := range prs {
			if p.GetHead().GetRef() == head && headInRepo(p.GetHead().GetRepo(), repo) {
				return fromGitHub(p), true, nil
			}
		}
		if len(prs) == 0 || resp == nil || resp.NextPage == 0 {
			return PR{}, false, nil
		}
		opts.Page = resp.NextPage
	}
}

// headInRepo: the head branch lives in repo (a deleted fork's head has no
// repository; its ref and the filter's owner decide).
func headInRepo(r *github.Repository, repo Repo) bool {
	return r == nil || strings.EqualFold(r.GetFullName(), repo.String())
}

// Comment implements Forge: a comment on the pull request's conversation
// (its issue's, on GitHub).
func (g *GitHub) Comment(ctx context.Context, repo Repo, number int64, body string) error {
	if err := repo.check(); err != nil {
		return err
	}
	if _, _, err := g.c.Issues.CreateComment(ctx, repo.Owner, repo.Name, int(number), &github.IssueComment{Body: &body}); err != nil {
		return fmt.Errorf("github: commenting on #%d of %s: %w", number, repo, err)
	}
	g.log.Info("pull request commented", "repo", repo.String(), "number", number)
	return nil
}

func fromGitHub(p *github.PullRequest) PR {
	pr := PR{Number: int64(p.GetNumber()), URL: p.GetHTMLURL(), State: p.GetState(), Draft: p.GetDraft(),
		Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef()}
	if p.GetMerged() || p.MergedAt != nil {
		pr.State = "merged"
	}
	return pr
}

// Self implements Forge: the token's user (GET /user), asked once.
func (g *GitHub) Self(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.self != "" {
		return g.self, nil
	}
	u, _, err := g.c.Users.Get(ctx, "")
	if err != nil {
		return "", fmt.Errorf("github: who the token is for: %w", err)
	}
	g.self = u.GetLogin()
	return g.self, nil
}
