package proc

import (
	"runtime"
	"sync"
)

// A supervised child is started with a parent-death signal
// (SysProcAttr.Pdeathsig): the kernel signals it when its parent dies, so
// that a bot killed with SIGKILL leaves nothing running on its own. The
// kernel's "parent" is the thread that forked, not the process: if that
// thread exits, the child is signalled while the bot lives on. Go ends a thread when a goroutine
// locked to it returns without unlocking, and any goroutine may be the
// one that did so on the thread our fork happens to run on.
//
// So every child the bot supervises is forked from one goroutine locked
// to its thread for good: that thread runs nothing else, never exits
// before the process does, and the parent-death signal means exactly "the
// bot died".

var (
	spawnOnce sync.Once
	spawnReqs chan func()
)

// OnSpawnThread runs fn on the spawning thread and returns when it has.
// Calls are served one at a time; fn must not block for long (a fork and
// exec does not).
func OnSpawnThread(fn func()) {
	spawnOnce.Do(func() {
		spawnReqs = make(chan func())
		go func() {
			// Never unlocked, never returns: the thread lives as long as
			// the process.
			runtime.LockOSThread()
			for f := range spawnReqs {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawnReqs <- func() {
		defer close(done)
		fn()
	}
	<-done
}
