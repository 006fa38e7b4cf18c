package slack

import (
	"net/url"
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

var _ adapters.Linker = (*Adapter)(nil)

// ThreadLink is the thread's permalink: the workspace's URL that
// auth.test gave, then /archives/<channel>/p<thread ts without its dot>
// (Slack's form for a message's link). "" before auth.test, or for a ref
// that is no Slack message.
func (a *Adapter) ThreadLink(t adapters.ThreadRef) string {
	a.mu.Lock()
	base := a.webURL
	a.mu.Unlock()
	u, err := url.Parse(base)
	if err != nil || base == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	ch := t.Channel[strings.LastIndexByte(t.Channel, '/')+1:] // "team/channel" or "channel"
	secs, micros, ok := strings.Cut(t.Thread, ".")
	if !ok || !digits(secs) || !digits(micros) || !alnum(ch) {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/archives/" + ch + "/p" + secs + micros
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func alnum(s string) bool {
	return s != "" && strings.Trim(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}
