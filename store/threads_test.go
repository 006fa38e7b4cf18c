package store

import (
	"reflect"
	"testing"
	"time"
)

func TestThreads(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	full := Thread{
		Key: "slack/C1/1700000000.000100", Platform: "slack", Channel: "C1", ThreadID: "1700000000.000100",
		StartedBy: "U1", SessionID: "5f0c…", Cwd: "/srv/api", Model: "opus", Mode: "default",
		State: "running", CreatedAt: tNs, LastActivity: t2,
		Repo: "/srv/git/api.git", Worktree: "/ws/worktrees/thread-1", Branch: "claudeops/thread-1", BaseCommit: "0123abcd",
	}
	norm := func(th Thread) Thread {
		th.CreatedAt, th.LastActivity = ms(th.CreatedAt), ms(th.LastActivity)
		return th
	}
	for _, tc := range []struct {
		name  string
		saves []Thread
		want  Thread
	}{
		{"every field", []Thread{full}, norm(full)},
		{"zero values", []Thread{{Key: "console/console/main"}}, Thread{Key: "console/console/main"}},
		{"upsert replaces fields, keeps CreatedAt", []Thread{
			{Key: "k2", State: "idle", SessionID: "s1", CreatedAt: t1, LastActivity: t1},
			{Key: "k2", State: "closed", SessionID: "", Model: "sonnet", CreatedAt: t3, LastActivity: t3},
		}, Thread{Key: "k2", State: "closed", Model: "sonnet", CreatedAt: t1, LastActivity: t3}},
		{"CreatedAt filled in later", []Thread{
			{Key: "k3"},
			{Key: "k3", CreatedAt: t2},
		}, Thread{Key: "k3", CreatedAt: t2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, th := range tc.saves {
				if err := s.SaveThread(ctx, th); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.GetThread(ctx, tc.want.Key)
			if err != nil || !ok {
				t.Fatalf("GetThread: ok=%v err=%v", ok, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}

	t.Run("missing", func(t *testing.T) {
		got, ok, err := s.GetThread(ctx, "nope")
		if err != nil || ok || !reflect.DeepEqual(got, Thread{}) {
			t.Errorf("GetThread(missing) = %+v, %v, %v", got, ok, err)
		}
	})

	t.Run("list by last activity", func(t *testing.T) {
		s := openTest(t)
		for _, th := range []Thread{
			{Key: "b", LastActivity: t2},
			{Key: "never"},
			{Key: "c", LastActivity: t3},
			{Key: "a", LastActivity: t2},
			{Key: "d", LastActivity: t1},
		} {
			if err := s.SaveThread(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		ts, err := s.ListThreads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, th := range ts {
			keys = append(keys, th.Key)
		}
		if want := []string{"c", "a", "b", "d", "never"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("order %v, want %v", keys, want)
		}
	})

	t.Run("idle worktrees", func(t *testing.T) {
		s := openTest(t)
		for _, th := range []Thread{
			{Key: "old", Worktree: "/w/old", LastActivity: t1},
			{Key: "older", Worktree: "/w/older", LastActivity: t1.Add(-time.Hour)},
			{Key: "removed", LastActivity: t1},
			{Key: "recent", Worktree: "/w/recent", LastActivity: t3},
		} {
			if err := s.SaveThread(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		ts, err := s.IdleWorktrees(ctx, t2)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, th := range ts {
			keys = append(keys, th.Key)
		}
		if want := []string{"older", "old"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("idle worktrees %v, want %v", keys, want)
		}
	})
}

func TestChannels(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	for _, tc := range []struct {
		name  string
		saves []Channel
		want  Channel
	}{
		{"every field", []Channel{{Key: "slack/C1", Cwd: "/srv/api", Repo: "/srv/git/api.git", UpdatedBy: "U1", UpdatedAt: tNs}},
			Channel{Key: "slack/C1", Cwd: "/srv/api", Repo: "/srv/git/api.git", UpdatedBy: "U1", UpdatedAt: ms(tNs)}},
		{"upsert", []Channel{
			{Key: "matrix/!r:x", Cwd: "/a", UpdatedBy: "@a:x", UpdatedAt: t1},
			{Key: "matrix/!r:x", Cwd: "/b", UpdatedBy: "@b:x", UpdatedAt: t2},
		}, Channel{Key: "matrix/!r:x", Cwd: "/b", UpdatedBy: "@b:x", UpdatedAt: t2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.saves {
				if err := s.SaveChannel(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.GetChannel(ctx, tc.want.Key)
			if err != nil || !ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("GetChannel = %+v, %v, %v; want %+v", got, ok, err, tc.want)
			}
		})
	}
	if _, ok, err := s.GetChannel(ctx, "nope"); ok || err != nil {
		t.Errorf("GetChannel(missing): ok=%v err=%v", ok, err)
	}
}
