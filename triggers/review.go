package triggers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/claudeops/claudeops/store"
)

// A review trigger (review: true) routes the comments and reviews on a
// pull request the bot opened into the thread that opened it: the event
// is looked up by the pull request's page (store.PullRequestByURL), and
// its author's text is posted there, marked as outside text. It costs no
// model call; the thread's starter or an admin decides whether Claude
// addresses it. An event about any other pull request, and one authored
// by the forge account the bot itself uses (its own comments: no loop),
// is "ignored". The checks before (signature, delivery, filters,
// repositories) and the rate apply as to any trigger.

// Reviews is where a review trigger's events go; cmd connects the store's
// pull requests, the forges and the thread's side (bot/reviews).
type Reviews interface {
	// PullRequestByURL is the pull request the bot opened at url; ok is
	// false for any other.
	PullRequestByURL(ctx context.Context, url string) (store.PullRequest, bool, error)
	// Self is the login of the forge account the bot uses for pr's
	// repository ("" when it has none).
	Self(ctx context.Context, pr store.PullRequest) (string, error)
	// Post puts r into pr's thread, without a model call; it returns once
	// the thread has it queued.
	Post(ctx context.Context, pr store.PullRequest, r Review) error
}

// Review is a comment or a review on a pull request, as a forge's
// webhook told it.
type Review struct {
	Trigger, Delivery string
	// PR is the pull request's page; Number its number.
	PR     string
	Number int64
	// Author is the forge login that wrote it: nobody in the chat.
	Author string
	// What says what it is ("comment", "review (approved)", "review
	// comment on api/x.go:12").
	What string
	// Body is the author's text as written.
	Body string
	// URL is the comment's page, when the forge gave one.
	URL string
}

// Quoted is r as a line of Claude's prompt: every string of the author's
// in «…» on one line (as a template shows an event's strings), so that
// it cannot pass for a line of the bot's or close its quotation.
func (r Review) Quoted() string {
	return fmt.Sprintf("- %s by %s on pull request #%d: %s", r.What, External(r.Author), r.Number, External(r.Body))
}

// reviewEvents are the webhook events about a pull request's
// conversation: Gitea's (its X-Gitea-Event names, and the longer names
// of X-Gitea-Event-Type) and GitHub's.
var reviewEvents = map[string][]string{
	KindGitea: {"issue_comment", "pull_request_comment", "pull_request_approved", "pull_request_rejected",
		"pull_request_review_approved", "pull_request_review_rejected", "pull_request_review_comment"},
	KindGitHub: {"issue_comment", "pull_request_review", "pull_request_review_comment"},
}

func isReviewEvent(kind, event string) bool {
	for _, e := range reviewEvents[kind] {
		if e == event {
			return true
		}
	}
	return false
}

// newActions are the actions of a new comment or review; an edit, a
// deletion or a dismissal is not routed.
var newActions = map[string]bool{"created": true, "submitted": true, "reviewed": true}

// parseReview reads a review event's body; ok is false when it is not a
// new comment or review on a pull request.
func parseReview(event string, body map[string]any) (Review, bool) {
	if !newActions[str(body["action"])] {
		return Review{}, false
	}
	issue := obj(body, "issue")
	pull := obj(body, "pull_request")
	if len(pull) == 0 {
		pull = obj(issue, "pull_request") // a comment on a pull request's conversation
	}
	r := Review{PR: str(pull["html_url"]), Number: num(pull["number"])}
	if r.PR == "" && len(pull) > 0 || r.PR == "" && body["is_pull"] == true {
		r.PR = str(issue["html_url"])
	}
	if r.Number == 0 {
		r.Number = num(issue["number"])
	}
	if r.Number == 0 {
		r.Number = num(body["number"])
	}
	if r.PR == "" {
		return Review{}, false
	}
	r.What, r.Author, r.Body, r.URL = whatOf(event, body)
	if r.Author == "" {
		r.Author = str(obj(body, "sender")["login"])
	}
	return r, true
}

// whatOf says what a review event is and who wrote what: a comment's
// (comment), else a review's (GitHub's review.body by review.user,
// Gitea's review.content by the sender).
func whatOf(event string, body map[string]any) (what, author, text, url string) {
	if c := obj(body, "comment"); len(c) > 0 {
		what = "Comment"
		if p := str(c["path"]); p != "" {
			what = "Review comment on " + p
			if l := num(c["line"]); l > 0 {
				what += fmt.Sprintf(":%d", l)
			}
		}
		return what, str(obj(c, "user")["login"]), str(c["body"]), str(c["html_url"])
	}
	rv := obj(body, "review")
	what = "Review"
	switch state := strings.ToLower(str(rv["state"]) + " " + str(rv["type"]) + " " + event); {
	case strings.Contains(state, "approved"):
		what = "Review (approved)"
	case strings.Contains(state, "changes_requested"), strings.Contains(state, "rejected"):
		what = "Review (changes requested)"
	case strings.Contains(event, "comment"):
		what = "Review comment"
	}
	text = str(rv["body"])
	if text == "" {
		text = str(rv["content"])
	}
	return what, str(obj(rv, "user")["login"]), text, str(rv["html_url"])
}

func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

var (
	notOurs = answer{"ignored", http.StatusOK, "ignored: not a pull request the bot opened"}
	ownText = answer{"ignored", http.StatusOK, "ignored: the bot's own"}
	posted  = answer{"accepted", http.StatusAccepted, "posted to its thread"}
)

// routeReview posts a review event that passed the checks before into
// the thread that opened its pull request.
func (h *Handler) routeReview(ctx context.Context, t *Trigger, event string, body map[string]any, delivery string, now time.Time) answer {
	if h.reviews == nil {
		h.log.Error("a review trigger without the reviews connected", "trigger", t.Name)
		return failed
	}
	rv, ok := parseReview(event, body)
	if !ok {
		return ignored
	}
	rv.Trigger, rv.Delivery = t.Name, delivery
	pr, ok, err := h.reviews.PullRequestByURL(ctx, rv.PR)
	switch {
	case err != nil:
		h.log.Error("read a pull request", "trigger", t.Name, "err", err)
		return failed
	case !ok:
		return notOurs
	}
	self, err := h.reviews.Self(ctx, pr)
	if err != nil {
		// Unknown who the bot is: not posted, lest its own text loop.
		h.log.Warn("the forge account the bot uses", "trigger", t.Name, "err", err)
		return failed
	}
	if self != "" && strings.EqualFold(self, rv.Author) {
		return ownText
	}
	id, refused, ok := h.startRun(ctx, t, event, delivery, now)
	if !ok {
		return refused
	}
	end := store.TriggerRun{Status: "ok", ThreadKey: pr.ThreadKey}
	if err := h.reviews.Post(ctx, pr, rv); err != nil {
		end.Status, end.Error = "failed", err.Error()
		h.log.Warn("post a review into its thread", "trigger", t.Name, "thread", pr.ThreadKey, "err", err)
	}
	end.EndedAt = h.now()
	if err := h.rec.EndTriggerRun(context.WithoutCancel(ctx), id, end); err != nil {
		h.log.Error("record a trigger run's end", "trigger", t.Name, "err", err)
	}
	if end.Status != "ok" {
		return failed
	}
	return posted
}
