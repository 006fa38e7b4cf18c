package store

import (
	"reflect"
	"testing"
)

func TestRules(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	in := []Rule{
		{ID: 77, Scope: "global", Effect: "deny", Tool: "Bash", Pattern: "rm -rf *", CreatedBy: "admin", CreatedAt: tNs},
		{Scope: "channel", ScopeKey: "slack/C1", Effect: "allow", Tool: "Read", CreatedAt: t1},
		{Scope: "thread", ScopeKey: "slack/C1/1.0", Effect: "allow", Tool: "Edit", Pattern: "src/**"},
	}
	var want []Rule
	for _, r := range in {
		id, err := s.AddRule(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		r.ID, r.CreatedAt = id, ms(r.CreatedAt)
		want = append(want, r)
	}
	if want[0].ID == 77 {
		t.Error("AddRule used the caller's ID")
	}
	for _, tc := range []struct {
		name     string
		delete   int64
		wantOK   bool
		wantKept []Rule
	}{
		{"all, by id", 0, false, want},
		{"delete the middle", want[1].ID, true, []Rule{want[0], want[2]}},
		{"delete again", want[1].ID, false, []Rule{want[0], want[2]}},
		{"delete the last", want[2].ID, true, []Rule{want[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.delete != 0 {
				ok, err := s.DeleteRule(ctx, tc.delete)
				if err != nil || ok != tc.wantOK {
					t.Fatalf("DeleteRule(%d) = %v, %v; want %v", tc.delete, ok, err, tc.wantOK)
				}
			}
			got, err := s.Rules(ctx)
			if err != nil || !reflect.DeepEqual(got, tc.wantKept) {
				t.Errorf("Rules = %+v, %v\nwant %+v", got, err, tc.wantKept)
			}
		})
	}
	// A deleted rule's id is never handed out again.
	id, err := s.AddRule(ctx, Rule{Scope: "global", Effect: "allow", Tool: "Glob"})
	if err != nil || id <= want[2].ID {
		t.Errorf("AddRule after deleting the newest = %d, %v; want > %d", id, err, want[2].ID)
	}
}

func TestAudit(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	entries := []AuditEntry{
		{ID: 500, At: t1, ThreadKey: "a", UserID: "U1", Action: "decide", Target: "ap-1", Detail: "allow", Allowed: true},
		{At: t3, ThreadKey: "b", UserID: "U2", Action: "decide", Target: "ap-2", Detail: "not the starter", Allowed: false},
		{At: t2, ThreadKey: "a", UserID: "U3", Action: "command", Target: "stop"},
		{At: t2, ThreadKey: "a", UserID: "U4", Action: "command", Target: "mode plan", Allowed: true},
		{At: tNs, ThreadKey: "", UserID: "console", Action: "rules add", Allowed: true},
	}
	for _, e := range entries {
		if err := s.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		thread string
		limit  int
		want   []string // user ids, newest first
	}{
		{"all", "", 0, []string{"console", "U2", "U4", "U3", "U1"}},
		{"all, limited", "", 2, []string{"console", "U2"}},
		{"one thread, same At by insertion", "a", -1, []string{"U4", "U3", "U1"}},
		{"one thread, limited", "a", 1, []string{"U4"}},
		{"unknown thread", "zzz", 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := s.AuditLog(ctx, tc.thread, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var users []string
			for _, e := range es {
				users = append(users, e.UserID)
			}
			if !reflect.DeepEqual(users, tc.want) {
				t.Errorf("users %v, want %v", users, tc.want)
			}
		})
	}
	t.Run("round trip", func(t *testing.T) {
		es, err := s.AuditLog(ctx, "b", 0)
		if err != nil || len(es) != 1 {
			t.Fatalf("AuditLog = %v, %v", es, err)
		}
		want := entries[1]
		want.ID = es[0].ID
		if !reflect.DeepEqual(es[0], want) || want.ID == 0 {
			t.Errorf("got %+v, want %+v", es[0], want)
		}
		last, _ := s.AuditLog(ctx, "", 0)
		if e := last[len(last)-1]; e.ID == 500 || !e.Allowed || !e.At.Equal(t1) {
			t.Errorf("first entry %+v: ID must be assigned, fields kept", e)
		}
	})
}
