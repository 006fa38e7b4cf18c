package forge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"code.gitea.io/sdk/gitea"
)

// draftPrefix marks a draft on Gitea, which has no draft flag of its own:
// a title starting with one of its WORK_IN_PROGRESS_PREFIXES ("WIP:" by
// default) makes the pull request a work in progress.
const draftPrefix = "WIP: "

// pageSize is how many pull requests one list request asks for (Gitea's
// default cap is 50).
const pageSize = 50

// Gitea is a Forge on a Gitea (or Forgejo) server, through Gitea's SDK.
// Safe for concurrent use.
type Gitea struct {
	url   string
	token Token
	http  *http.Client
	log   *slog.Logger

	// self is the token's login once asked (Self).
	mu   sync.Mutex
	self string
}

// GiteaConfig configures NewGitea.
type GiteaConfig struct {
	URL   string // the server's root, e.g. https://git.example.com
	Token Token  // a token allowed to write the repositories' pull requests
	// HTTP is the client for the API; nil: one with a 30 s timeout.
	HTTP *http.Client
	Log  *slog.Logger // nil: slog.Default()
}

// NewGitea makes a Gitea client. It makes no request.
func NewGitea(cfg GiteaConfig) (*Gitea, error) {
	if cfg.URL == "" {
		return nil, errors.New("gitea: no server URL")
	}
	if cfg.Token.Empty() {
		return nil, errors.New("gitea: no token")
	}
	g := &Gitea{url: strings.TrimSuffix(cfg.URL, "/"), token: cfg.Token, http: cfg.HTTP, log: cfg.Log}
	if g.http == nil {
		g.http = &http.Client{Timeout: 30 * time.Second}
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	return g, nil
}

var _ Forge = (*Gitea)(nil)

// client is an SDK client for one call: the SDK takes its context per
// client, not per request. It asks the server nothing (the version check
// is off: the methods used are all older than any Gitea supported).
func (g *Gitea) client(ctx context.Context) (*gitea.Client, error) {
	c, err := gitea.NewClient(g.url, gitea.SetGiteaVersion(""), gitea.SetHTTPClient(g.http),
		gitea.SetToken(g.token.value()), gitea.SetContext(ctx), gitea.SetUserAgent("claudeops"))
	if err != nil {
		return nil, fmt.Errorf("gitea: client for %s: %w", g.url, err)
	}
	return c, nil
}

// OpenOrUpdatePR implements Forge.
func (g *Gitea) OpenOrUpdatePR(ctx context.Context, repo Repo, head, base, title, body string, draft bool) (PR, error) {
	if err := repo.check(); err != nil {
		return PR{}, err
	}
	if head == "" || base == "" || strings.TrimSpace(title) == "" {
		return PR{}, fmt.Errorf("gitea: pull request on %s: head, base and title are needed", repo)
	}
	if draft && !strings.HasPrefix(title, draftPrefix) {
		title = draftPrefix + title
	}
	c, err := g.client(ctx)
	if err != nil {
		return PR{}, err
	}
	open, found, err := g.find(c, repo, head)
	if err != nil {
		return PR{}, err
	}
	if found {
		return g.update(c, repo, open.Number, base, title, body)
	}
	created, resp, err := c.CreatePullRequest(repo.Owner, repo.Name, gitea.CreatePullRequestOption{
		Head: head, Base: base, Title: title, Body: body,
	})
	if err != nil && resp != nil && resp.StatusCode == http.StatusConflict {
		// Opened by someone else since find: update that one instead.
		if pr, found, ferr := g.find(c, repo, head); ferr == nil && found {
			return g.update(c, repo, pr.Number, base, title, body)
		}
	}
	if err != nil {
		return PR{}, fmt.Errorf("gitea: opening a pull request from %s into %s on %s: %w", head, base, repo, err)
	}
	pr := toPR(created)
	g.log.Info("pull request opened", "repo", repo.String(), "number", pr.Number, "head", head, "draft", pr.Draft)
	return pr, nil
}

func (g *Gitea) update(c *gitea.Client, repo Repo, number int64, base, title, body string) (PR, error) {
	edited, _, err := c.EditPullRequest(repo.Owner, repo.Name, number, gitea.EditPullRequestOption{
		Title: title, Body: &body, Base: base,
	})
	if err != nil {
		return PR{}, fmt.Errorf("gitea: updating pull request #%d on %s: %w", number, repo, err)
	}
	pr := toPR(edited)
	g.log.Info("pull request updated", "repo", repo.String(), "number", pr.Number, "draft", pr.Draft)
	return pr, nil
}

// PRFor implements Forge.
func (g *Gitea) PRFor(ctx context.Context, repo Repo, head string) (PR, bool, error) {
	if err := repo.check(); err != nil {
		return PR{}, false, err
	}
	c, err := g.client(ctx)
	if err != nil {
		return PR{}, false, err
	}
	return g.find(c, repo, head)
}

// find pages through repo's open pull requests for the one from head in
// repo itself (a fork's branch of the same name is another head).
func (g *Gitea) find(c *gitea.Client, repo Repo, head string) (PR, bool, error) {
	for page := 1; ; page++ {
		prs, resp, err := c.ListRepoPullRequests(repo.Owner, repo.Name, gitea.ListPullRequestsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize},
			State:       gitea.StateOpen,
		})
		if err != nil {
			return PR{}, false, fmt.Errorf("gitea: listing the open pull requests of %s: %w", repo, err)
		}
		for _, p := range prs {
			if p.Head != nil && p.Head.Ref == head && sameRepo(p.Head.Repository, p.Base, repo) {
				return toPR(p), true, nil
			}
		}
		if len(prs) == 0 || resp == nil || resp.NextPage == 0 {
			return PR{}, false, nil
		}
	}
}

// sameRepo: the head branch lives in repo (its repository is the base's,
// or is repo by name).
func sameRepo(headRepo *gitea.Repository, base *gitea.PRBranchInfo, repo Repo) bool {
	if headRepo == nil {
		return true // a deleted fork's head has no repository; its ref alone decides
	}
	if base != nil && base.RepoID != 0 && headRepo.ID == base.RepoID {
		return true
	}
	return strings.EqualFold(headRepo.FullName, repo.String())
}

// Comment implements Forge.
func (g *Gitea) Comment(ctx context.Context, repo Repo, number int64, body string) error {
	if err := repo.check(); err != nil {
		return err
	}
	c, err := g.client(ctx)
	if err != nil {
		return err
	}
	if _, _, err := c.CreateIssueComment(repo.Owner, repo.Name, number, gitea.CreateIssueCommentOption{Body: body}); err != nil {
		return fmt.Errorf("gitea: commenting on #%d of %s: %w", number, repo, err)
	}
	g.log.Info("pull request commented", "repo", repo.String(), "number", number)
	return nil
}

func toPR(p *gitea.PullRequest) PR {
	pr := PR{Number: p.Index, URL: p.HTMLURL, State: string(p.State), Draft: p.Draft}
	if p.HasMerged {
		pr.State = "merged"
	}
	if p.Head != nil {
		pr.Head = p.Head.Ref
	}
	if p.Base != nil {
		pr.Base = p.Base.Ref
	}
	return pr
}

// Self implements Forge: the token's user, asked once.
func (g *Gitea) Self(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.self != "" {
		return g.self, nil
	}
	c, err := g.client(ctx)
	if err != nil {
		return "", err
	}
	u, _, err := c.GetMyUserInfo()
	if err != nil {
		return "", fmt.Errorf("gitea: who the token is for: %w", err)
	}
	g.self = u.UserName
	return g.self, nil
}
