// Package scopes is the extension that shows and changes, from chat, the
// settings of package settings: `settings` says each setting's effective
// value in the thread and where it comes from; `set` and `unset` change one
// at the thread's channel, or (bot admins) at its workspace, its platform
// or the whole bot.
//
// Only the thread's own place is ever named: the scope of a change is the
// thread's channel or one of the scopes that contain it (a flag, never a
// key given as an argument), and `settings` shows the values that apply
// there, so nothing of another channel is read or changed from a thread.
// Who may set what is the Resolver's (settings.Resolver.CheckChat): a
// channel's admins their channel's own settings, tightening limits only;
// bot admins any scope; nobody what the settings file manages. A refusal
// says why, is audited and changes nothing. An accepted change is stored
// first (Store), then applied (Resolver.SetChat), then audited with its
// before and after: if the store refuses it nothing changes. A setting is
// text for the bot to read: `set instructions` stores text for the model
// and never writes a permission rule.
//
// What chat set is kept in the store and read back at start: ChatLayer
// makes the Resolver's chat layer of the stored rows, LoadChat reads them
// and puts them in place.
//
// Files: scopes.go: the Extension, its Store, ChatLayer and LoadChat;
// set.go: `set` and `unset`; show.go: `settings`.
package scopes
