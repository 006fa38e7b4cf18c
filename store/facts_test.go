package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFacts: each channel keeps its own facts, in order; another channel's
// fact is not found by id; the bounds are refused with their errors.
func TestFacts(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	add := func(key, text string) (Fact, error) {
		return s.AddFact(ctx, Fact{ChannelKey: key, Text: text, By: "U1", ByName: "ann", At: at})
	}
	a1, err := add("slack/T1/C1", "the linter runs first")
	if err != nil {
		t.Fatal(err)
	}
	b1, err := add("slack/T1/C2", "B's secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := add("slack/T1/C1", "ünïcode "+strings.Repeat("é", MaxFactChars-8)); err != nil {
		t.Errorf("a fact of exactly %d characters (more bytes): %v", MaxFactChars, err)
	}
	for _, tt := range []struct {
		name, text string
		want       error
	}{
		{"empty", "", ErrEmptyFact},
		{"over the length", strings.Repeat("x", MaxFactChars+1), ErrFactTooLong},
	} {
		if _, err := add("slack/T1/C1", tt.text); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, ok, err := s.RemoveFact(ctx, "slack/T1/C1", b1.ID); ok || err != nil {
		t.Errorf("channel C1 removed C2's fact: %v %v", ok, err)
	}
	got, err := s.Facts(ctx, "slack/T1/C1")
	if err != nil || len(got) != 2 || got[0] != a1 {
		t.Fatalf("C1's facts = %+v, %v; want %+v first", got, err, a1)
	}
	if got, _ := s.Facts(ctx, "slack/T1/C2"); len(got) != 1 || got[0].Text != "B's secret" {
		t.Errorf("C2's facts = %+v", got)
	}
	f, ok, err := s.RemoveFact(ctx, "slack/T1/C1", a1.ID)
	if err != nil || !ok || f != a1 {
		t.Errorf("remove = %+v %v %v, want %+v", f, ok, err, a1)
	}
	if _, ok, _ := s.RemoveFact(ctx, "slack/T1/C1", a1.ID); ok {
		t.Error("a fact was removed twice")
	}
}

// TestFactsBoundUnderRace: adds at once never pass MaxFacts.
func TestFactsBoundUnderRace(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for i := range MaxFacts + 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.AddFact(ctx, Fact{ChannelKey: "k", Text: strings.Repeat("f", i%7+1)})
			if errors.Is(err, ErrTooManyFacts) {
				mu.Lock()
				refused++
				mu.Unlock()
			} else if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, _ := s.Facts(ctx, "k"); len(got) != MaxFacts || refused != 20 {
		t.Errorf("%d facts kept, %d refused; want %d and 20", len(got), refused, MaxFacts)
	}
	if _, err := s.AddFact(ctx, Fact{ChannelKey: "other", Text: "x"}); err != nil {
		t.Errorf("another channel is bounded by k's facts: %v", err)
	}
}
