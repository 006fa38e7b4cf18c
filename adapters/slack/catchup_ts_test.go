package slack

import (
	"strings"
	"testing"
	"time"
)

// Slack's ts compare as numbers: "9.5" is before "10.000001", and a
// shortened fraction is microseconds all the same.
func TestTSOrder(t *testing.T) {
	tests := []struct {
		a, b  string
		after bool
	}{
		{"1795321455.130184", "1795321455.130183", true},
		{"1795321455.130183", "1795321455.130183", false},
		{"10.000001", "9.5", true},
		{"9.5", "10.000001", false},
		{"1.5", "1.499999", true},
		{"1795321455.130183", "", true},
		{"", "1.000001", false},
		{"slash-123", "1.000001", false},
		{"1.000001", "not a ts", true},
	}
	for _, tt := range tests {
		if got := tsAfter(tt.a, tt.b); got != tt.after {
			t.Errorf("tsAfter(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
	if got := latestTS("", "9.5", "10.000001", "2.0"); got != "10.000001" {
		t.Errorf("latestTS = %q", got)
	}
	at := time.Unix(1795321455, 130183_999)
	if got := tsOf(at); got != "1795321455.130183" {
		t.Errorf("tsOf = %q", got)
	}
	if got := tsOf(time.Unix(-5, 0)); got != "0" {
		t.Errorf("tsOf before the epoch = %q", got)
	}
}

func TestLateNotice(t *testing.T) {
	tests := []struct {
		n      int
		capped bool
		want   []string
		not    []string
	}{
		{1, false, []string{"Picked up late: the bot was offline when this was sent."}, []string{"not picked up"}},
		{3, false, []string{"the 3 messages above", "in order"}, []string{"not picked up"}},
		{50, true, []string{"the 50 messages above", "(50 messages)", "later messages were not picked up"}, nil},
		{0, true, []string{"later messages were not picked up"}, []string{"Picked up late"}},
	}
	for _, tt := range tests {
		got := lateNotice(tt.n, tt.capped, 50)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("lateNotice(%d, %v) = %q, lacks %q", tt.n, tt.capped, got, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(got, w) {
				t.Errorf("lateNotice(%d, %v) = %q, has %q", tt.n, tt.capped, got, w)
			}
		}
	}
}
