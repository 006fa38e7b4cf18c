package matrix

import (
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

var _ adapters.Linker = (*Adapter)(nil)

// ThreadLink is a matrix.to link to the thread's root event in its room,
// which every Matrix client opens ("" for a ref that is no room's event).
// The IDs are percent-encoded whole, as matrix.to asks.
func (a *Adapter) ThreadLink(t adapters.ThreadRef) string {
	if !strings.HasPrefix(t.Channel, "!") || !strings.HasPrefix(t.Thread, "$") {
		return ""
	}
	return "https://matrix.to/#/" + adapters.PercentEncode(t.Channel) + "/" + adapters.PercentEncode(t.Thread)
}
