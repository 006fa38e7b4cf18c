package store

import (
	"testing"
	"time"
)

func TestChatAccounts(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	if _, ok, err := s.ChatAccount(ctx, "matrix", "@bot:hs"); err != nil || ok {
		t.Fatalf("empty store: ok=%v err=%v", ok, err)
	}
	at := time.UnixMilli(1_700_000_000_000).UTC()
	a := ChatAccount{Platform: "matrix", Account: "@bot:hs", Server: "http://hs", DeviceID: "DEV1", AccessToken: "tok", PickleKey: "pk", UpdatedAt: at}
	if err := s.SaveChatAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.RecoveryKey = "EsT1 abcd"
	if err := s.SaveChatAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.ChatAccount(ctx, "matrix", "@bot:hs")
	if err != nil || !ok || got != a {
		t.Fatalf("got %+v ok=%v err=%v, want %+v", got, ok, err, a)
	}
	if _, ok, _ := s.ChatAccount(ctx, "slack", "@bot:hs"); ok {
		t.Error("accounts are per platform")
	}
}

func TestSyncCursors(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	if c, err := s.SyncCursor(ctx, "matrix", "@bot:hs"); err != nil || c != (SyncCursor{}) {
		t.Fatalf("empty store: %+v, %v", c, err)
	}
	at := time.UnixMilli(1_700_000_000_000).UTC()
	for _, c := range []SyncCursor{{NextBatch: "s1", FilterID: "f", At: at}, {NextBatch: "s2", FilterID: "f", At: at.Add(time.Second)}} {
		if err := s.SaveSyncCursor(ctx, "matrix", "@bot:hs", c, c.At); err != nil {
			t.Fatal(err)
		}
		if got, err := s.SyncCursor(ctx, "matrix", "@bot:hs"); err != nil || got != c {
			t.Fatalf("got %+v, %v; want %+v", got, err, c)
		}
	}
}
