package store

import (
	"testing"
	"time"
)

func TestScopeSettings(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	at := time.UnixMilli(1_700_000_000_000)
	v := ScopeSetting{Level: 3, ScopeKey: "slack/C1", Name: "model", Value: "opus", SetBy: "U1", SetAt: at}
	if err := s.SaveScopeSetting(ctx, v); err != nil {
		t.Fatal(err)
	}
	v.Value, v.SetBy = "haiku", "U2"
	if err := s.SaveScopeSetting(ctx, v); err != nil {
		t.Fatal(err)
	}
	got, err := s.ScopeSettings(ctx)
	if err != nil || len(got) != 1 || !got[0].SetAt.Equal(at) || got[0].Value != "haiku" || got[0].SetBy != "U2" || got[0].Level != 3 || got[0].ScopeKey != "slack/C1" {
		t.Fatalf("ScopeSettings = %+v, %v; want [%+v]", got, err, v)
	}
	if err := s.DeleteScopeSetting(ctx, 3, "slack/C1", "model"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ScopeSettings(ctx); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
}
