package slack

// EditNow applies an edit at once, bypassing the editor's coalescing, so
// that a test decides exactly which versions of a text reach Slack.
var EditNow = (*Adapter).editNow
