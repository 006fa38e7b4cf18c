// Package memory is the extension that keeps a channel's facts: what its
// people asked Claude to remember. `remember <fact>` stores one, `memory`
// lists them numbered, `forget <n>` removes one; each change is audited
// with who and the text.
//
// The facts reach the model as text of the system prompt, never of the
// conversation: the part is a thread.Instructor, whose section ("Facts
// this channel asked you to remember:") the kernel appends to the
// session's system prompt at every start, and at the next turn of a live
// session after a change. They are guidance, never a rule: nothing here
// touches permissions.
//
// Claude may propose a fact with the bot's own tool remember (the part is
// a thread.Proposer): the call stores nothing; the thread shows the fact
// with Remember and Dismiss, and only a person's click (thread.Clicker)
// by someone allowed to remember stores it, audited as theirs.
//
// Facts are kept by the channel's key (store.Fact): a thread sees its own
// channel's facts only, and nothing lists facts across channels. Who may
// remember and forget is one function (Config.May): by default any user
// of the bot remembers, and a fact's author or an admin forgets it.
//
// Files: memory.go: the Extension, its store, who may do what, and the
// facts as instructions; commands.go: `remember`, `memory`, `forget`;
// propose.go: Claude's proposals and the clicks on them.
package memory
