package console

import (
	"errors"

	"github.com/claudeops/claudeops/adapters"
)

// ConnStatus implements adapters.ConnReporter: connected while Run reads
// the operator's input; disconnected once the input ended (or failed) or
// Run returned, since nothing can arrive any more.
func (a *Adapter) ConnStatus() adapters.ConnStatus { return a.conn.Status() }

// errInputEnded is the link's last news once the operator's input ended.
var errInputEnded = errors.New("console input ended")
