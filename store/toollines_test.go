package store

import (
	"errors"
	"slices"
	"testing"
)

// TestToolLines: a line is recorded, replaced by its ref, listed, and
// forgotten; forgetting one not recorded is no error.
func TestToolLines(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	a := ToolLine{Ref: "slack/C/1.1#2.2", ThreadKey: "slack/C/1.1", Tool: "Bash", Input: "sleep 30"}
	b := ToolLine{Ref: "matrix/!r/$root#$ev|1", ThreadKey: "matrix/!r/$root", Tool: "Read", Input: "/etc/hosts", Depth: 1}
	for _, l := range []ToolLine{a, b, {Ref: a.Ref, ThreadKey: a.ThreadKey, Tool: "Bash", Input: "sleep 31"}} {
		if err := s.RecordToolLine(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	a.Input = "sleep 31"
	if got, err := s.ToolLines(ctx); err != nil || !slices.Equal(got, []ToolLine{b, a}) {
		t.Errorf("ToolLines = %+v, %v; want %+v", got, err, []ToolLine{b, a})
	}
	if err := errors.Join(s.ForgetToolLine(ctx, a.Ref), s.ForgetToolLine(ctx, "never")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ToolLines(ctx); err != nil || !slices.Equal(got, []ToolLine{b}) {
		t.Errorf("after forgetting: %+v, %v", got, err)
	}
}
