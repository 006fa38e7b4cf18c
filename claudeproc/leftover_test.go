package claudeproc

import (
	"bufio"
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leftoverGroup is a real process group standing in for what a dead bot
// left: a leader (sh) and the tools it started, one in a session of its
// own as the real CLI starts its Bash commands; and, when the case has
// one, a keeper in a group of its own.
type leftoverGroup struct {
	leader *exec.Cmd
	tools  []int
	keeper *exec.Cmd
	g      Group
}

// startLeftover starts script in a new session; the script prints "tool
// <pid>" for each tool it starts, then "ready". The test's cleanup kills
// and reaps everything.
func startLeftover(t *testing.T, script string, withKeeper bool) *leftoverGroup {
	t.Helper()
	lg := &leftoverGroup{leader: exec.Command("/bin/sh", "-c", script)}
	lg.leader.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := lg.leader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lg.leader.Start(); err != nil {
		t.Fatal(err)
	}
	pid := lg.leader.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		for _, tool := range lg.tools {
			if id, err := Identify(tool); err == nil && id.Start >= lg.g.Leader.Start {
				_ = syscall.Kill(tool, syscall.SIGKILL)
			}
		}
		_ = lg.leader.Wait()
		if lg.keeper != nil {
			_ = lg.keeper.Process.Kill()
			_ = lg.keeper.Wait()
		}
	})
	leader, err := Identify(pid)
	if err != nil {
		t.Fatal(err)
	}
	lg.g = Group{ID: pid, Leader: leader}
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
		if n, _ := strconv.Atoi(strings.TrimPrefix(sc.Text(), "tool ")); n > 0 {
			lg.tools = append(lg.tools, n)
		}
	}
	if len(lg.tools) == 0 {
		t.Fatal("the leader reported no tools")
	}
	if withKeeper {
		lg.keeper = exec.Command("sleep", "302")
		lg.keeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := lg.keeper.Start(); err != nil {
			t.Fatal(err)
		}
		if lg.g.Keeper, err = Identify(lg.keeper.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	return lg
}

const (
	// toolScript: two tools, one in the leader's group, one in a session
	// of its own; SIGTERM ends them. The leader stays.
	toolScript = `sleep 300 & echo "tool $!"; setsid sleep 303 & echo "tool $!"; echo ready; exec sleep 301`
	// stubbornScript: leader and tools ignore SIGTERM (ignored signals
	// are inherited): only SIGKILL ends them.
	stubbornScript = `trap '' TERM; sleep 300 & echo "tool $!"; setsid sleep 303 & echo "tool $!"; echo ready; wait`
	// orphanScript: the leader exits at once, leaving its tool in the group.
	orphanScript = `sleep 300 & echo "tool $!"; echo ready`
)

var leftoverCases = []struct {
	name   string
	script string
	keeper bool
	// stop: the leader is stopped, as its parent-death signal leaves it.
	stop bool
	// reapLeader: the leader has exited and is reaped, its pid free.
	reapLeader bool
	// zombie: the leader has exited and is not reaped yet.
	zombie bool
	// forge changes the record before EndLeftover reads it.
	forge      func(g *Group)
	want       LeftoverOutcome
	wantErr    string
	wantGone   bool // the leader and its tools ended (else all still run)
	keeperGone bool
}{
	{name: "identity matches: the session ends", script: toolScript, want: LeftoverEnded, wantGone: true},
	{name: "stopped by its parent-death signal: the session ends", script: toolScript, stop: true, want: LeftoverEnded, wantGone: true},
	{name: "tools ignore SIGTERM: SIGKILL after the grace", script: stubbornScript, want: LeftoverEnded, wantGone: true},
	{name: "a keeper still running is killed with it", script: toolScript, keeper: true, want: LeftoverEnded, wantGone: true, keeperGone: true},
	{name: "start time does not match: not signalled", script: toolScript,
		forge: func(g *Group) { g.Leader.Start++ }, want: LeftoverForeign},
	{name: "another boot: not signalled", script: toolScript,
		forge: func(g *Group) { g.Leader.Boot = "00000000-0000-0000-0000-000000000000" }, want: LeftoverForeign},
	{name: "leader dead, not reaped: its group ends", script: orphanScript, zombie: true, want: LeftoverEnded, wantGone: true},
	{name: "leader gone, nothing proves the rest: not signalled", script: orphanScript, reapLeader: true, want: LeftoverUnproven},
	{name: "leader gone, its keeper still running: only the keeper is killed", script: orphanScript, keeper: true, reapLeader: true,
		want: LeftoverUnproven, keeperGone: true},
	{name: "forged keeper start time: the keeper is not signalled", script: orphanScript, keeper: true, reapLeader: true,
		forge: func(g *Group) { g.Keeper.Start-- }, want: LeftoverUnproven},
	{name: "refused: group 1", script: toolScript,
		forge: func(g *Group) { g.ID, g.Leader.PID = 1, 1 }, wantErr: "refusing to signal process group 1"},
	{name: "refused: the leader is not the group's", script: toolScript,
		forge: func(g *Group) { g.ID = syscall.Getpgrp() }, wantErr: "its recorded leader is pid"},
	{name: "refused: the bot's own group", script: toolScript,
		forge: func(g *Group) { g.ID = syscall.Getpgrp(); g.Leader.PID = g.ID }, wantErr: "the bot's own"},
}

// TestEndLeftover runs EndLeftover on real processes; /proc (through
// kill(pid, 0) and the process state) says what still runs.
func TestEndLeftover(t *testing.T) {
	for _, tc := range leftoverCases {
		t.Run(tc.name, func(t *testing.T) {
			lg := startLeftover(t, tc.script, tc.keeper)
			if tc.reapLeader {
				if err := lg.leader.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.zombie {
				waitGone(t, lg.leader.Process.Pid, 30*time.Second) // a zombie counts as gone
			}
			if tc.stop {
				if err := lg.leader.Process.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
			}
			g := lg.g
			if tc.forge != nil {
				tc.forge(&g)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := EndLeftover(ctx, g, 500*time.Millisecond)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("EndLeftover = %+v, %v; want an error with %q", res, err, tc.wantErr)
				}
			} else if err != nil || res.Outcome != tc.want {
				t.Fatalf("EndLeftover = %v %v, %v; want %v", res.Outcome, res.Left, err, tc.want)
			}
			live := lg.tools
			if !tc.reapLeader { // once reaped, its pid is no longer the leader's
				live = append(live, lg.leader.Process.Pid)
			}
			for _, pid := range live {
				if gone := processGone(pid); gone != tc.wantGone {
					t.Errorf("pid %d gone = %v, want %v", pid, gone, tc.wantGone)
				}
			}
			if lg.keeper != nil {
				if gone := processGone(lg.keeper.Process.Pid); gone != tc.keeperGone {
					t.Errorf("keeper gone = %v, want %v", gone, tc.keeperGone)
				}
			}
			if tc.want == LeftoverUnproven && !slices.Contains(res.Left, lg.tools[0]) {
				t.Errorf("Left = %v, want the tool %d in it", res.Left, lg.tools[0])
			}
		})
	}
}
