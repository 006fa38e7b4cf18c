package claudeproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// Group is what the local runner started for one session: recorded (by the
// bot, in its store) so that the next run can end it should this run die
// without doing so itself.
type Group struct {
	// ID is the process group's (and session's) id: the leader's pid.
	ID int
	// Leader is the process the runner started: the CLI, or bwrap.
	Leader ProcessID
	// Keeper is the session's keeper (internal/proc); PID 0 when there is
	// none.
	Keeper ProcessID
}

// Grouped is implemented by the handles of processes the bot started
// itself (Local, Sandbox): what to record of them. ok is false when the
// process could not be identified.
type Grouped interface {
	Group() (g Group, ok bool)
}

// LeftoverOutcome is what EndLeftover found and did.
type LeftoverOutcome int

const (
	// LeftoverGone: nothing of the session runs any more.
	LeftoverGone LeftoverOutcome = iota
	// LeftoverEnded: the session's CLI still ran, and was ended with
	// everything under it.
	LeftoverEnded
	// LeftoverForeign: the recorded pid now names another process (pid
	// reuse): nothing was signalled.
	LeftoverForeign
	// LeftoverUnproven: processes are in a group of that id, but the
	// CLI is not there to prove it is the recorded one: nothing was
	// signalled.
	LeftoverUnproven
)

func (o LeftoverOutcome) String() string {
	switch o {
	case LeftoverGone:
		return "gone"
	case LeftoverEnded:
		return "ended"
	case LeftoverForeign:
		return "pid reused"
	case LeftoverUnproven:
		return "unproven"
	}
	return fmt.Sprintf("LeftoverOutcome(%d)", int(o))
}

// Leftover is EndLeftover's report.
type Leftover struct {
	Outcome LeftoverOutcome
	// Left are the processes left when EndLeftover returned: those it
	// would not signal (LeftoverUnproven), or those that outlived SIGKILL's
	// wait (a process in uninterruptible sleep).
	Left []int
}

// leftoverPoll is how often EndLeftover looks at what it waits for.
const leftoverPoll = 50 * time.Millisecond

// EndLeftover ends what is left of a session that an earlier run of the
// bot recorded and did not see end.
//
// Its CLI is the session's only while it is still the recorded process
// (ProcessID.Current): then everything under it, and in its process
// group, is the session's (a pid, and so a group id, is handed out again
// only once nothing uses it). That tree is frozen (freezeTree); the CLI
// stays stopped, as its parent-death signal left it: with nobody to answer
// it, running again could only let it act. Its tools get SIGTERM and grace
// to end, then whatever is left of the tree and the group gets SIGKILL.
// A keeper still running is killed too. Without the CLI nothing else is
// signalled: a stranger may own the ids now.
//
// It refuses groups that cannot be a session's: ids 0 and 1, a leader that
// is not the group's leader, the caller's own process or group.
func EndLeftover(ctx context.Context, g Group, grace time.Duration) (Leftover, error) {
	if err := g.check(); err != nil {
		return Leftover{}, err
	}
	if g.Keeper.PID > 1 && g.Keeper.PID != os.Getpid() && g.Keeper.Current() {
		_ = syscall.Kill(g.Keeper.PID, syscall.SIGKILL)
		// SIGKILL is delivered asynchronously: wait, so that what the
		// caller reports next is what runs.
		waitUntil(ctx, grace, func() bool { return !running(g.Keeper) })
	}
	if !g.Leader.Current() {
		return g.unprovenOutcome()
	}
	if !running(g.Leader) {
		// Dead, not yet reaped by its new parent: what it started is no
		// longer under it, but the group id is still its own.
		return g.endGroup(ctx, grace)
	}
	tree := freezeTree(g.ID)
	var tools []ProcessID
	for _, id := range tree {
		if id.PID != g.ID {
			tools = append(tools, id)
		}
	}
	for _, id := range tools {
		if id.Current() {
			_ = syscall.Kill(id.PID, syscall.SIGTERM)
			_ = syscall.Kill(id.PID, syscall.SIGCONT)
		}
	}
	waitUntil(ctx, grace, func() bool { return !anyRunning(tools) })
	// The group first, while the stopped CLI holds its id.
	if err := signalTree(g.ID, tree, syscall.SIGKILL); err != nil {
		return Leftover{}, fmt.Errorf("end leftover session %d: %w", g.ID, err)
	}
	waitUntil(ctx, grace, func() bool { return !anyRunning(tree) })
	var left []int
	for _, id := range tree {
		if running(id) {
			left = append(left, id.PID)
		}
	}
	return Leftover{Outcome: LeftoverEnded, Left: left}, nil
}

// endGroup ends the group of a dead but unreaped leader: SIGTERM, then
// after grace SIGKILL to what is left. The leader holds the id meanwhile,
// and so does any member left.
func (g Group) endGroup(ctx context.Context, grace time.Duration) (Leftover, error) {
	members, err := groupMembers(g.ID)
	if err != nil {
		return Leftover{}, fmt.Errorf("look for leftover group %d: %w", g.ID, err)
	}
	if len(members) == 0 {
		return Leftover{Outcome: LeftoverGone}, nil
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := syscall.Kill(-g.ID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return Leftover{}, fmt.Errorf("end leftover group %d: %s: %w", g.ID, signalName(sig), err)
		}
		waitUntil(ctx, grace, func() bool {
			members, err = groupMembers(g.ID)
			return err == nil && len(members) == 0
		})
		if len(members) == 0 {
			break
		}
	}
	return Leftover{Outcome: LeftoverEnded, Left: members}, nil
}

// check refuses a record that cannot name a session's group: a damaged or
// forged one must not make the bot signal init, everyone, or itself.
func (g Group) check() error {
	switch {
	case g.ID <= 1:
		return fmt.Errorf("refusing to signal process group %d", g.ID)
	case g.Leader.PID != g.ID:
		return fmt.Errorf("refusing to signal process group %d: its recorded leader is pid %d", g.ID, g.Leader.PID)
	case g.ID == os.Getpid() || g.ID == syscall.Getpgrp():
		return fmt.Errorf("refusing to signal process group %d: it is the bot's own", g.ID)
	}
	return nil
}

// unprovenOutcome says what runs in a group whose recorded members are gone.
func (g Group) unprovenOutcome() (Leftover, error) {
	members, err := groupMembers(g.ID)
	if err != nil {
		return Leftover{}, fmt.Errorf("look for leftover group %d: %w", g.ID, err)
	}
	if _, err := readStat(g.Leader.PID); err == nil {
		// The leader's pid names another process: it was free, so the
		// recorded group had emptied first.
		return Leftover{Outcome: LeftoverForeign}, nil
	}
	if len(members) == 0 {
		return Leftover{Outcome: LeftoverGone}, nil
	}
	return Leftover{Outcome: LeftoverUnproven, Left: members}, nil
}

// anyRunning: one of ids still runs.
func anyRunning(ids []ProcessID) bool {
	return slices.ContainsFunc(ids, running)
}

// running: id is current and not a zombie.
func running(id ProcessID) bool {
	if !id.Current() {
		return false
	}
	st, err := readStat(id.PID)
	return err == nil && st.State != 'Z' && st.State != 'X'
}

// waitUntil polls done until it holds, grace passes or ctx ends.
func waitUntil(ctx context.Context, grace time.Duration, done func() bool) {
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(leftoverPoll)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}
