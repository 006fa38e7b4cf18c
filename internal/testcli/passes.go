package testcli

import (
	"regexp"
	"slices"
	"strings"
)

// A pass is a second run of some of the real-CLI tests under other
// conditions. Each real-CLI start costs about 1.3 s of CPU (the CLI's own
// start, measured: 0.9 s user and 0.4 s system per one-turn session on
// 2.1.330), nearly all of a real-CLI test's cost, so a pass reruns what
// the condition can change rather than all 250 tests (the minimum CLI's
// pass over all of them took 1,429 s of a 3,216 s run).

// EndToEnd are the end-to-end tests both passes run: a conversation over
// several turns, approvals and questions, stop and queued messages, reap
// and resume, restart (clean, SIGTERM, kill -9 mid-turn and mid-tool),
// files, the trust modes and write grants, git in a worktree, a scheduled
// run, the repository's instructions, commands and skills — on the console, Slack
// and Matrix. TestEndToEndAreRealCLITests holds each name to a real-CLI
// test of the tree.
var EndToEnd = []string{
	"TestConsoleConversationOverSeveralTurns", "TestConsoleApprovals", "TestConsoleQuestions",
	"TestConsoleStopMidTurnAndQueuedFollowUps", "TestConsoleReapThenResume",
	"TestConsoleRestartExpiresApprovalAndResumes", "TestAttachedFiles", "TestTrustModes",
	"TestTrustWriteGrants", "TestTrustDenyRulesReachTheCLI", "TestWorktreeSessionGit",
	"TestKill9MidTurnThenRestart", "TestKill9MidToolThenRestart", "TestSIGTERMShutsDownInOrder",
	"TestMentionGetsThreadedReply", "TestApprovalByButtons", "TestStopButton",
	"TestInvitesMentionsAndThreads", "TestApprovalByReactionAndTyped", "TestRestartNeitherReplaysNorLoses",
	"TestRepositoryInstructionsReachClaude", "TestRepositoryCommandReachesClaude", "TestRepositorySkillCalledByClaude",
	"TestConsoleSchedules",
}

// cliPackages are the packages whose subject is the CLI itself: its
// protocol, its flags and the guard, its permission engine.
var cliPackages = []string{"./claudeproc", "./internal/fakeanthropic", "./internal/permcompare"}

// cliSecurity names the tests elsewhere that hold a safety property
// through the CLI (who decides, what a mode, a rule or a grant lets the
// CLI do, where it must still ask, what a hostile repository, output or
// slash command can reach, which secrets and files the session can
// read): every CLI version the bot accepts must keep them.
var cliSecurity = regexp.MustCompile(`Hostile|^TestTrust|^TestRepository|Slash|Rule|Grant|Asks|Protected|Secrets|Approver|Private`)

// MinimumCLI are the tests the oldest supported CLI runs again: every
// real-CLI test of the CLI's own packages, the safety tests that go
// through the CLI, and EndToEnd. What they leave out is the bot's own
// logic over a conversation, which the pinned CLI's pass covers and a
// CLI version does not change.
func (r RealTests) MinimumCLI() RealTests {
	return r.keep(func(dir, name string) bool {
		return slices.Contains(cliPackages, dir) || cliSecurity.MatchString(name) || slices.Contains(EndToEnd, name)
	})
}

// Sandbox are the tests run again with claude in the sandbox runner:
// claudeproc's TestRealCLI* and EndToEnd (the sandbox's own tests,
// TestSandbox*, run in the suite).
func (r RealTests) Sandbox() RealTests {
	return r.keep(func(dir, name string) bool {
		return (dir == "./claudeproc" && strings.HasPrefix(name, "TestRealCLI")) ||
			slices.Contains(EndToEnd, name)
	})
}

func (r RealTests) keep(f func(dir, name string) bool) RealTests {
	out := RealTests{}
	for dir, names := range r {
		for _, n := range names {
			if f(dir, n) {
				out[dir] = append(out[dir], n)
			}
		}
	}
	return out
}
