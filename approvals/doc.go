// Package approvals is the permission engine: rules (allow or deny by tool
// and input pattern, scoped global, channel or thread), pending can_use_tool
// requests keyed by request_id, who may decide them, expiry, "always allow",
// and AskUserQuestion answers. It holds state and makes decisions; it does no
// I/O and knows nothing of Slack or Matrix.
package approvals
