package matrix

import (
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

func TestThreadLink(t *testing.T) {
	a := &Adapter{}
	for _, c := range []struct {
		ref  adapters.ThreadRef
		want string
	}{
		{adapters.ThreadRef{Channel: "!room:example.org", Thread: "$ev/ent+1"}, "https://matrix.to/#/%21room%3Aexample.org/%24ev%2Fent%2B1"},
		{adapters.ThreadRef{Channel: "#alias:example.org", Thread: "$e"}, ""},
		{adapters.ThreadRef{Channel: "!room:example.org", Thread: "root"}, ""},
	} {
		if got := a.ThreadLink(c.ref); got != c.want {
			t.Errorf("ThreadLink(%+v) = %q, want %q", c.ref, got, c.want)
		}
	}
}
