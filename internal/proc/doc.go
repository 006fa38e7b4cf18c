// Package proc holds what the bot's supervision of its own child processes
// rests on, for every package that starts one (claudeproc's local runner,
// workspace's git): none of them outlives the bot.
//
// The contract, for a child started with Start (or by hand the same way):
// it is forked on the spawning thread (OnSpawnThread) with a session of its
// own and the parent-death signal SIGSTOP; its keeper (StartKeeper) ends it
// and everything under it when the bot dies, however it dies. While the bot
// lives, it reaps the child and then kills the keeper (Keeper.Kill,
// Keeper.Wait), which then does nothing. A child that starts no process
// of its own needs no keeper (StartLeaf): the parent-death signal is then
// SIGKILL.
//
// What a child detaches from its tree (a daemon that double-forks) escapes,
// as it escapes the bot's own signals; and a bot killed between the fork
// and the keeper's start (a millisecond) leaves its child stopped, not
// running.
//
// Files: stat.go, /proc/<pid>/stat read; spawn.go, the spawning thread;
// keeper.go, the keeper; start.go, a child started with all of it.
package proc
