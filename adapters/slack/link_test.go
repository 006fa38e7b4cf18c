package slack

import (
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

func TestThreadLink(t *testing.T) {
	a := &Adapter{webURL: "https://acme.slack.com/"}
	for _, c := range []struct {
		ref  adapters.ThreadRef
		want string
	}{
		{adapters.ThreadRef{Platform: Platform, Channel: "C0123ABC", Thread: "1712345678.000200"}, "https://acme.slack.com/archives/C0123ABC/p1712345678000200"},
		{adapters.ThreadRef{Platform: Platform, Channel: "T01/C0123ABC", Thread: "1712345678.000200"}, "https://acme.slack.com/archives/C0123ABC/p1712345678000200"},
		{adapters.ThreadRef{Platform: Platform, Channel: "C0123ABC", Thread: "not-a-ts"}, ""},
		{adapters.ThreadRef{Platform: Platform, Channel: "C01/../x", Thread: "1.2"}, ""},
		{adapters.ThreadRef{Platform: Platform, Channel: "", Thread: "1.2"}, ""},
	} {
		if got := a.ThreadLink(c.ref); got != c.want {
			t.Errorf("ThreadLink(%+v) = %q, want %q", c.ref, got, c.want)
		}
	}
	if got := (&Adapter{}).ThreadLink(adapters.ThreadRef{Channel: "C1", Thread: "1.2"}); got != "" {
		t.Errorf("before auth.test: %q, want none", got)
	}
	if got := (&Adapter{webURL: "javascript:alert(1)"}).ThreadLink(adapters.ThreadRef{Channel: "C1", Thread: "1.2"}); got != "" {
		t.Errorf("a workspace URL that is no web page: %q, want none", got)
	}
}
