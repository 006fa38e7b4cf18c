package fakegithub

import (
	"encoding/base64"
	"fmt"
	"time"
)

// The JSON GitHub answers, in the shapes of its REST description (every
// reply is checked against it): users, repositories, pull requests,
// comments and errors. IDs and node IDs are made up; URLs point at the
// fake (api: the API's base URL, web: its pages').

type obj = map[string]any

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func nodeID(kind string, id int64) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s%d", kind, id))
}

func (s *Server) user(login string) obj {
	api, id := s.URL+"/users/"+login, s.userID(login)
	return obj{
		"login": login, "id": id, "node_id": nodeID("U_", id), "type": "User", "site_admin": false,
		"avatar_url": s.Web + "/avatars/" + login, "gravatar_id": "",
		"url": api, "html_url": s.Web + "/" + login,
		"followers_url": api + "/followers", "following_url": api + "/following{/other_user}",
		"gists_url": api + "/gists{/gist_id}", "starred_url": api + "/starred{/owner}{/repo}",
		"subscriptions_url": api + "/subscriptions", "organizations_url": api + "/orgs",
		"repos_url": api + "/repos", "events_url": api + "/events{/privacy}",
		"received_events_url": api + "/received_events",
	}
}

func (s *Server) repository(r *repo) obj {
	full := r.owner + "/" + r.name
	api, web := s.URL+"/repos/"+full, s.Web+"/"+full
	o := obj{
		"id": r.id, "node_id": nodeID("R_", r.id), "name": r.name, "full_name": full,
		"owner": s.user(r.owner), "private": false, "fork": false, "description": nil,
		"html_url": web, "url": api, "clone_url": web + ".git", "git_url": "git:" + web + ".git",
		"ssh_url": "git@fake:" + full + ".git", "svn_url": web, "mirror_url": nil, "homepage": nil,
		"language": nil, "license": nil, "default_branch": r.defaultBranch,
		"forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0, "watchers_count": 0,
		"open_issues": r.openCount(), "open_issues_count": r.openCount(), "size": 0,
		"has_issues": true, "has_projects": false, "has_wiki": false, "has_pages": false,
		"has_downloads": false, "archived": false, "disabled": false,
		"pushed_at": stamp(r.created), "created_at": stamp(r.created), "updated_at": stamp(r.created),
	}
	for k, path := range map[string]string{
		"archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}",
		"blobs_url": "/git/blobs{/sha}", "branches_url": "/branches{/branch}",
		"collaborators_url": "/collaborators{/collaborator}", "comments_url": "/comments{/number}",
		"commits_url": "/commits{/sha}", "compare_url": "/compare/{base}...{head}",
		"contents_url": "/contents/{+path}", "contributors_url": "/contributors",
		"deployments_url": "/deployments", "downloads_url": "/downloads", "events_url": "/events",
		"forks_url": "/forks", "git_commits_url": "/git/commits{/sha}", "git_refs_url": "/git/refs{/sha}",
		"git_tags_url": "/git/tags{/sha}", "hooks_url": "/hooks",
		"issue_comment_url": "/issues/comments{/number}", "issue_events_url": "/issues/events{/number}",
		"issues_url": "/issues{/number}", "keys_url": "/keys{/key_id}", "labels_url": "/labels{/name}",
		"languages_url": "/languages", "merges_url": "/merges", "milestones_url": "/milestones{/number}",
		"notifications_url": "/notifications{?since,all,participating}", "pulls_url": "/pulls{/number}",
		"releases_url": "/releases{/id}", "stargazers_url": "/stargazers", "statuses_url": "/statuses/{sha}",
		"subscribers_url": "/subscribers", "subscription_url": "/subscription", "tags_url": "/tags",
		"teams_url": "/teams", "trees_url": "/git/trees{/sha}",
	} {
		o[k] = api + path
	}
	return o
}

// branchRef is a pull request's head or base.
func (s *Server) branchRef(r *repo, ref, sha string) obj {
	return obj{"label": r.owner + ":" + ref, "ref": ref, "sha": sha, "user": s.user(r.owner), "repo": s.repository(r)}
}

// pull is a pull request as "pull-request" (full: GET one, create,
// update) or "pull-request-simple" (a list's item).
func (s *Server) pull(r *repo, p *PullRequest, full bool) obj {
	fullName := r.owner + "/" + r.name
	api, web := s.URL+"/repos/"+fullName, s.Web+"/"+fullName
	self := fmt.Sprintf("%s/pulls/%d", api, p.Number)
	issue := fmt.Sprintf("%s/issues/%d", api, p.Number)
	page := fmt.Sprintf("%s/pull/%d", web, p.Number)
	o := obj{
		"url": self, "id": p.ID, "node_id": nodeID("PR_", p.ID), "number": p.Number,
		"html_url": page, "diff_url": page + ".diff", "patch_url": page + ".patch", "issue_url": issue,
		"commits_url": self + "/commits", "review_comments_url": self + "/comments",
		"review_comment_url": api + "/pulls/comments{/number}", "comments_url": issue + "/comments",
		"statuses_url": api + "/statuses/" + p.HeadSHA,
		"state":        p.State, "locked": false, "title": p.Title, "body": nullable(p.Body), "draft": p.Draft,
		"user": s.user(p.User), "labels": []any{}, "milestone": nil, "assignee": nil, "assignees": []any{},
		"requested_reviewers": []any{}, "requested_teams": []any{}, "active_lock_reason": nil,
		"created_at": stamp(p.Created), "updated_at": stamp(p.Updated), "closed_at": nil,
		"merged_at": nil, "merge_commit_sha": nil, "author_association": "OWNER", "auto_merge": nil,
		"head": s.branchRef(r, p.Head, p.HeadSHA), "base": s.branchRef(r, p.Base, p.BaseSHA),
		"_links": obj{
			"self": link(self), "html": link(page), "issue": link(issue), "comments": link(issue + "/comments"),
			"review_comments": link(self + "/comments"), "review_comment": link(api + "/pulls/comments{/number}"),
			"commits": link(self + "/commits"), "statuses": link(api + "/statuses/" + p.HeadSHA),
		},
	}
	if p.State == "closed" {
		o["closed_at"] = stamp(p.Updated)
	}
	if full {
		for k, v := range (obj{
			"merged": false, "mergeable": nil, "rebaseable": nil, "mergeable_state": "unknown",
			"merged_by": nil, "comments": len(p.Comments), "review_comments": 0,
			"maintainer_can_modify": false, "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
		}) {
			o[k] = v
		}
	}
	return o
}

func link(href string) obj { return obj{"href": href} }

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) comment(r *repo, number int64, c Comment) obj {
	api := s.URL + "/repos/" + r.owner + "/" + r.name
	return obj{
		"id": c.ID, "node_id": nodeID("IC_", c.ID), "body": c.Body, "user": s.user(c.User),
		"url":        fmt.Sprintf("%s/issues/comments/%d", api, c.ID),
		"html_url":   fmt.Sprintf("%s/%s/%s/pull/%d#issuecomment-%d", s.Web, r.owner, r.name, number, c.ID),
		"issue_url":  fmt.Sprintf("%s/issues/%d", api, number),
		"created_at": stamp(c.Created), "updated_at": stamp(c.Created), "author_association": "OWNER",
	}
}

// docs is where GitHub's errors point.
const docs = "https://docs.github.com/rest"

// basicError is GitHub's error body ("basic-error").
func basicError(status int, msg string) obj {
	return obj{"message": msg, "documentation_url": docs, "status": fmt.Sprint(status)}
}

// validationFailed is GitHub's 422 ("validation-error"), with what failed.
func validationFailed(errs ...obj) obj {
	list := make([]any, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	return obj{"message": "Validation Failed", "errors": list, "documentation_url": docs, "status": "422"}
}
