package matrix

import "github.com/claudeops/claudeops/adapters"

// ConnStatus implements adapters.ConnReporter: the sync loop's link to the
// homeserver. Connecting until the first sync response; connected while
// syncs succeed; disconnected, with the error, from a failed sync until
// one succeeds again (the loop retries every few seconds).
func (a *Adapter) ConnStatus() adapters.ConnStatus { return a.conn.Status() }
