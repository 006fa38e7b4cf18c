// Package settings says which value of a setting applies where, and why.
//
// A setting (model, instructions, who administers a channel, a budget, …)
// may be given at several scopes, widest first: the bot (its environment),
// a platform ("slack", "matrix", "console"), a workspace (a Slack team
// "slack/T0123", a Matrix server "matrix/example.org"), a channel ("slack/C0123",
// "matrix/!room:example.org", the same key as the bot's channel key) and,
// for the few settings that make sense per thread, a thread. The narrowest
// scope that gives a value wins; Effective answers with the value and its
// Source ("channel slack/C0123, from the settings file, line 12").
//
// Values come from three origins: the bot's configuration (its
// environment, fixed at start), the settings file (CLAUDEOPS_SETTINGS_FILE,
// YAML, every problem reported with its line, reloaded as a whole and
// never half-applied: a file with any problem keeps the last good one) and chat (set by admins, stored by the
// bot). At one scope the file wins over chat, and a setting the file
// gives at a scope cannot be set there from chat (Resolver.CheckChat, ErrManaged).
//
// Who may set what from chat is part of the schema (Spec.Who): a
// channel's admins may set what only shapes the channel's own sessions
// (instructions, model, mode, effort, replies) and may tighten, never
// loosen, what limits it (budgets, the session quota); what widens what a
// session reaches or who may use the bot (users, admins, repository,
// image, MCP servers) is the bot admins'.
//
// The package is a leaf: it imports nothing of the repository, and knows
// channels only by the keys the bot gives it.
//
// Files: schema.go (the settings, their kinds and checks), scope.go
// (scopes and where a value came from), resolve.go (the Resolver),
// file.go (the settings file), users.go (user patterns).
package settings
