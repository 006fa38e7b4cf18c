package store

import (
	"context"
	"testing"
	"time"
)

func TestPullRequests(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 2, 30, 0, 0, time.UTC)
	a := PullRequest{URL: "http://git.test/team/api/pulls/3", Repo: "http://git.test/team/api.git", ForgeRepo: "team/api",
		Number: 3, Head: "claudeops/schedule-4-20261129-0230", Base: "main", ThreadKey: "slack/C1/1.0",
		ScheduleID: 4, OpenedBy: "schedule:4", OpenedAt: t0, UpdatedAt: t0}
	if err := s.SavePullRequest(ctx, a); err != nil {
		t.Fatal(err)
	}
	// Updated the next night: the thread changes, who opened it does not.
	b := a
	b.ThreadKey, b.OpenedBy, b.UpdatedAt = "slack/C1/2.0", "someone else", t0.Add(24*time.Hour)
	if err := s.SavePullRequest(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.PullRequestByURL(ctx, a.URL)
	if err != nil || !ok {
		t.Fatalf("PullRequestByURL: %v %v", ok, err)
	}
	if got.ThreadKey != "slack/C1/2.0" || got.OpenedBy != "schedule:4" || !got.OpenedAt.Equal(t0) || got.State != "open" {
		t.Errorf("after the update: %+v", got)
	}
	if _, ok, _ := s.PullRequestByURL(ctx, "http://git.test/team/api/pulls/4"); ok {
		t.Error("a pull request the bot did not open was found")
	}
	open, ok, err := s.OpenPullRequestOfSchedule(ctx, 4)
	if err != nil || !ok || open.URL != a.URL {
		t.Fatalf("OpenPullRequestOfSchedule: %+v %v %v", open, ok, err)
	}
	if err := s.SetPullRequestState(ctx, a.URL, "merged", t0.Add(25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.OpenPullRequestOfSchedule(ctx, 4); ok {
		t.Error("a merged pull request is still the schedule's open one")
	}
	ps, err := s.PullRequestsOfThread(ctx, "slack/C1/2.0")
	if err != nil || len(ps) != 1 || ps[0].State != "merged" {
		t.Errorf("PullRequestsOfThread: %+v %v", ps, err)
	}
	if err := s.SavePullRequest(ctx, PullRequest{Number: 1}); err == nil {
		t.Error("a pull request without a URL was saved")
	}
}

func TestSchedulePRRoundTrip(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	id, err := s.AddSchedule(ctx, Schedule{Spec: "30 2 * * *", Prompt: "update deps", Platform: "slack", Channel: "C1",
		Push: true, PR: true, CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	sc, ok, err := s.GetSchedule(ctx, id)
	if err != nil || !ok || !sc.PR || !sc.Push {
		t.Fatalf("GetSchedule: %+v %v %v", sc, ok, err)
	}
	slot := now.Truncate(time.Minute)
	if _, err := s.ClaimRun(ctx, id, slot, now); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, ScheduleRun{ScheduleID: id, Slot: slot, EndedAt: now, Status: RunSucceeded,
		Branch: "claudeops/schedule-1", PR: "http://git.test/team/api/pulls/3"}); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, id, 10)
	if err != nil || len(runs) != 1 || runs[0].PR != "http://git.test/team/api/pulls/3" {
		t.Fatalf("runs: %+v %v", runs, err)
	}
}
