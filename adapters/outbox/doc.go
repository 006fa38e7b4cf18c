// Package outbox is the adapters' one mailroom on the way out: what the
// Slack and Matrix adapters embed so that no method of adapters.Adapter
// waits on the platform, Ask excepted. It knows no platform: an adapter
// hands it its own calls.
//
//   - mailroom.go: the Mailroom, a lane per thread. Post, Edit,
//     UpdatePrompt and SetStatus queue the call and return; the lane makes
//     the calls in the order they were asked, so a status never overtakes
//     the answer. What waits behind a call the platform holds (its pacing,
//     a 429's Retry-After, which the adapter waits out) collapses: the
//     queued edits of one message become one edit of its latest content,
//     an edit of a post still queued becomes what the post sends. Post
//     hands back a provisional ref at once, swapped for the platform's when
//     the post is made; a failed post is made by the message's next edit,
//     so final text lands. Ask and PostFile wait for their turn and the
//     platform's answer. Close drains (within its context); Drain waits
//     without closing; Await waits for one post; Resolve gives the platform's
//     ref of a post made, without waiting. mailroom_file.go holds
//     PostFile, mailroom_posted.go the hook that times a turn's first text
//     to the post the platform took (OnPosted, Posted).
//   - editor.go: the Editor, the pacing under the lanes. Per platform
//     message only the latest content is kept and sent, at most once per
//     interval (a post counts as a send: Posted); a final state is
//     urgent (sent at once, never dropped) and
//     lands before the adapter's next post in the thread (FlushThread);
//     failed sends are retried as the adapter says; Close sends what is
//     pending. Its ids are the platform's messages, not the bot's refs: a
//     long Slack text is several messages, Matrix shows a run of tool
//     lines in one event, so pacing is per what the platform edits.
//   - hold.go: a text's final edit held briefly (Hold, FinalHold) so that
//     the turn's footer, which comes tens to hundreds of ms later,
//     travels with it in one call (TakeHeld); anything else shown in the
//     thread first, Close or the deadline sends it as it is.
//   - registry.go: a bounded LRU/TTL map for what an adapter remembers of
//     the messages, prompts and threads it posted.
//   - clock.go: the time the Editor and the Registry go by.
//
// Why here and not in the bot: the contract "no method waits" is the
// port's, so it is kept by the adapters; the console writes to a terminal
// and keeps no mailroom (it is immediate: its transcript shows every edit
// as it was made). Before, the bot wrapped each adapter in a courier lane
// of its own (bot/courier) over an adapter that paced its edits in an
// Editor: two queues, two drains and two handles per thread to one
// platform. Now each adapter is one handle, and the lane and the pacing
// are drained by the adapter's one Close.
package outbox
