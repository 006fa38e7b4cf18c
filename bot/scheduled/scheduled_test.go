package scheduled

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// start runs s through RunScheduled against the fake thread ft: the run
// is posted, taken by the part, and whatever then happens is played by
// play (on the worker's behalf), before RunScheduled's answer is read.
func start(t *testing.T, ft *threadtest.Thread, s store.Schedule, timeout time.Duration, play func(t *testing.T, p *part)) (store.ScheduleRun, error) {
	t.Helper()
	e := New(Config{})
	e.Init(ft)
	ft.OpenRef = adapters.ThreadRef{Platform: "console", Channel: "console", Thread: "run-1"}
	p := e.Attach(ft).(*part)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	type result struct {
		r   store.ScheduleRun
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := e.RunScheduled(ctx, s, time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC))
		done <- result{r, err}
	}()
	synctest.Wait() // the run is posted
	for _, m := range ft.TakeSent() {
		p.Receive(context.Background(), m)
	}
	play(t, p)
	synctest.Wait()
	for _, m := range ft.TakeSent() { // the stop, when its time was up
		p.Receive(context.Background(), m)
	}
	res := <-done
	return res.r, res.err
}

func TestRun(t *testing.T) {
	s := store.Schedule{ID: 7, Spec: "0 2 * * *", Prompt: "nightly", Platform: "console", Channel: "console", CreatedBy: "bob"}
	result := &claudeproc.Result{Meta: claudeproc.Meta{SessionID: "s1"}, Result: "done", NumTurns: 2}
	tests := []struct {
		name     string
		refuse   error // BeginRun's
		queued   int   // messages people sent meanwhile
		play     func(t *testing.T, p *part)
		wait     time.Duration
		want     store.ScheduleRun
		err      string
		released bool
	}{
		{name: "a turn's end is the run's record", released: true,
			play: func(t *testing.T, p *part) {
				e := &thread.TurnEnd{Result: result, Cost: 0.5, InputTokens: 10, OutputTokens: 20, Branch: "b", Commit: "c"}
				p.AfterTurn(context.Background(), e)
				if !e.Release {
					t.Error("the run's process was not released")
				}
			},
			want: store.ScheduleRun{ThreadKey: "console/console/run-1", SessionID: "s1", Result: "done", CostUSD: 0.5, InputTokens: 10, OutputTokens: 20, NumTurns: 2, Branch: "b", Commit: "c"}},
		{name: "people who wrote meanwhile keep the session", queued: 1,
			play: func(t *testing.T, p *part) {
				e := &thread.TurnEnd{Result: result}
				p.AfterTurn(context.Background(), e)
				if e.Release {
					t.Error("the process was released under a queued message")
				}
			},
			want: store.ScheduleRun{ThreadKey: "console/console/run-1", SessionID: "s1", Result: "done", NumTurns: 2}},
		{name: "a refused prompt is not run", refuse: &thread.Refused{Why: "this channel's budget for today is spent"}, play: func(*testing.T, *part) {},
			want: store.ScheduleRun{ThreadKey: "console/console/run-1"}, err: "not run: this channel's budget for today is spent"},
		{name: "a prompt not sent", refuse: errors.New("the prompt could not be sent to Claude"), play: func(*testing.T, *part) {},
			want: store.ScheduleRun{ThreadKey: "console/console/run-1"}, err: "the prompt could not be sent to Claude"},
		{name: "the process ends under the run", play: func(t *testing.T, p *part) { p.OnExit(context.Background(), "killed") },
			want: store.ScheduleRun{ThreadKey: "console/console/run-1"}, err: "Claude Code stopped: killed"},
		{name: "its time is up", wait: time.Hour, play: func(*testing.T, *part) { time.Sleep(time.Hour) },
			want: store.ScheduleRun{ThreadKey: "console/console/run-1"}, err: context.DeadlineExceeded.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ft := threadtest.New("run-1", "")
				ft.PromptErr = tt.refuse
				ft.Current = thread.State{Live: true, Turn: 1, Queued: tt.queued}
				timeout := time.Hour
				if tt.wait > 0 {
					timeout = tt.wait / 2
				}
				got, err := start(t, ft, s, timeout, tt.play)
				if got != tt.want {
					t.Errorf("run %+v, want %+v", got, tt.want)
				}
				if msg := errString(err); msg != tt.err {
					t.Errorf("error %q, want %q", msg, tt.err)
				}
				if p := ft.Prompts; len(p) != 1 || p[0].Text != "nightly" || p[0].User.ID != "bob" || p[0].Auto != "scheduler" {
					t.Errorf("prompt %+v, want nightly for bob, from the scheduler", p)
				}
				if o := ft.Opened(); len(o) != 1 || !strings.HasPrefix(o[0], "console/console: ⏰ Scheduled run of #7 (`0 2 * * *`, slot 2026-11-23T02:00:00Z): nightly") {
					t.Errorf("threads opened %q", o)
				}
				if ft.Doing != nil {
					t.Errorf("the run %+v outlived its end", ft.Doing)
				}
			})
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestUnattendedAndParked: an unattended run denies what no rule allowed;
// a parked one gives the prompt a deadline (the approval timeout, or the
// run's end), notifies the creator, and at the deadline denies it and
// says so.
func TestUnattendedAndParked(t *testing.T) {
	tests := []struct {
		name     string
		policy   string
		runEnd   time.Duration // from now; 0: none
		deny     string
		deadline time.Duration // from now
		said     []string
		tell     string
	}{
		{name: "unattended", policy: "deny", deny: "This is an unattended scheduled run (schedule 7): only the channel's allow rules apply, and Bash is not allowed by any.",
			said: []string{"Bash was denied: unattended scheduled run, and no allow rule covers it."}},
		{name: "parked", policy: "park", deadline: 15 * time.Minute,
			said: []string{"notify @bob The scheduled run of #7 waits for your decision on prompt #1 (Bash). Unless someone decides within 15m0s, it is denied and the run goes on.",
				"Bash was denied: nobody decided by the deadline. The scheduled run of #7 goes on without it."},
			tell: "Nobody decided this in time (scheduled run of #7): it was denied. Go on without it."},
		{name: "parked until the run's end", policy: "park", runEnd: 5 * time.Minute, deadline: 5 * time.Minute,
			said: []string{"notify @bob The scheduled run of #7 waits for your decision on prompt #1 (Bash). Unless someone decides within 5m0s, it is denied as the run's time is up.",
				"Bash was denied: nobody decided before the scheduled run of #7 ran out of time."},
			tell: "Nobody decided this in time (scheduled run of #7): it was denied. Go on without it."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				ft := threadtest.New("run-1", "bob")
				e := New(Config{})
				e.Init(ft)
				p := e.Attach(ft).(*part)
				r := &run{what: thread.Run{Schedule: store.Schedule{ID: 7, CreatedBy: "bob", ApprovalPolicy: tt.policy}}, done: make(chan outcome, 1)}
				if tt.runEnd > 0 {
					r.deadline = time.Now().Add(tt.runEnd)
				}
				p.run = r
				a := &thread.Ask{Tool: "Bash"}
				p.BeforeAsk(ctx, a)
				if !strings.HasPrefix(a.Deny, tt.deny) || (tt.deny == "") != (a.Deny == "") {
					t.Errorf("deny %q, want %q…", a.Deny, tt.deny)
				}
				if tt.deny != "" {
					if !slices.Equal(ft.Said, tt.said) {
						t.Errorf("said %q, want %q", ft.Said, tt.said)
					}
					return
				}
				if want := time.Now().Add(tt.deadline); !a.Deadline.Equal(want) {
					t.Errorf("deadline %s, want %s", a.Deadline, want)
				}
				p.Asked(ctx, thread.Asked{Num: 1, Tool: "Bash", Expires: a.Deadline})
				time.Sleep(tt.deadline)
				ex := &thread.Expiry{Tool: "Bash", Expires: a.Deadline}
				p.Expired(ctx, ex)
				ft.Said = append(ft.Said, ex.Notice)
				if !slices.Equal(ft.Said, tt.said) {
					t.Errorf("said %q, want %q", ft.Said, tt.said)
				}
				if ex.Tell != tt.tell || ex.Outcome != "Expired: nobody decided in time; denied." {
					t.Errorf("expiry %+v", ex)
				}
			})
		})
	}
}

func TestScheduleOptions(t *testing.T) {
	tests := []struct {
		in     string
		prompt string
		want   store.Schedule
		err    string
	}{
		{in: "update the deps", prompt: "update the deps"},
		{in: "--park --queue --push --timeout 45m --catch-up 2h chore", prompt: "chore",
			want: store.Schedule{ApprovalPolicy: "park", Overlap: "queue", Push: true, Timeout: 45 * time.Minute, CatchUp: 2 * time.Hour}},
		{in: "--pr chore", prompt: "chore", want: store.Schedule{Push: true, PR: true}},
		{in: "--timeout soon chore", err: `--timeout wants a duration such as 45m, not "soon"`},
		{in: "--bogus x", err: "unknown option --bogus"},
		{in: "--park", err: "the prompt is missing"},
	}
	for _, tt := range tests {
		var s store.Schedule
		prompt, err := options(&s, tt.in)
		if !strings.HasPrefix(errString(err), tt.err) || (tt.err == "") != (err == nil) {
			t.Errorf("options(%q): error %v, want %q", tt.in, err, tt.err)
		}
		if tt.err != "" {
			continue
		}
		if prompt != tt.prompt || s != tt.want {
			t.Errorf("options(%q) = %q %+v, want %q %+v", tt.in, prompt, s, tt.prompt, tt.want)
		}
	}
}

// TestAddOptionsInHelp: every option `schedule add` reads is in its usage
// and its help, saying what it does: help and the parser share one table.
func TestAddOptionsInHelp(t *testing.T) {
	row := New(Config{}).Commands()[0]
	for _, o := range addOptions {
		if strings.TrimSpace(o.help) == "" {
			t.Errorf("%s: no help", o.name)
		}
		if !strings.Contains(row.Usage[0], "["+o.form()+"]") || !strings.Contains(row.Help, "`"+o.form()+"` "+o.help) {
			t.Errorf("%s is not in schedule's usage and help: %q, %q", o.form(), row.Usage[0], row.Help)
		}
		in := o.name + " p"
		if o.arg != "" {
			in = o.name + " 45m p"
		}
		var s store.Schedule
		if prompt, err := options(&s, in); err != nil || prompt != "p" || s == (store.Schedule{}) {
			t.Errorf("options(%q) = %q, %v, %+v", in, prompt, err, s)
		}
	}
}

// TestTriggerRunAsksNobody: a trigger's run is unattended whatever its
// event says: a request no allow rule settles is denied, audited as the
// trigger's, and told; nobody is notified.
func TestTriggerRunAsksNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := threadtest.New("run-1", "trigger:alert")
		e := New(Config{})
		e.Init(ft)
		p := e.Attach(ft).(*part)
		p.run = &run{what: thread.Run{Trigger: "alert", Schedule: store.Schedule{CreatedBy: "trigger:alert", ApprovalPolicy: "park"}}, done: make(chan outcome, 1)}
		a := &thread.Ask{Tool: "Bash"}
		p.BeforeAsk(context.Background(), a)
		if want := "This is an unattended run started by the trigger alert (an outside event)"; !strings.HasPrefix(a.Deny, want) {
			t.Errorf("deny %q, want %q…", a.Deny, want)
		}
		if want := []string{"Bash was denied: unattended run of the trigger alert, and no allow rule covers it."}; !slices.Equal(ft.Said, want) {
			t.Errorf("said %q, want %q", ft.Said, want)
		}
	})
}

// fakeRepos binds a channel to repo; forged says whether it has a forge.
type fakeRepos struct {
	repo   string
	forged bool
}

func (f fakeRepos) Repo(context.Context, string) string { return f.repo }
func (f fakeRepos) HasForge(string) bool                { return f.forged }

// fakeScheduling keeps what was added.
type fakeScheduling struct{ added []store.Schedule }

func (f *fakeScheduling) Add(_ context.Context, s store.Schedule) (store.Schedule, error) {
	s.ID = int64(len(f.added) + 1)
	f.added = append(f.added, s)
	return s, nil
}
func (f *fakeScheduling) SetPaused(context.Context, int64, bool) error     { return nil }
func (f *fakeScheduling) Remove(context.Context, int64) error              { return nil }
func (f *fakeScheduling) RunNow(context.Context, int64) (time.Time, error) { return time.Time{}, nil }
func (f *fakeScheduling) Next(store.Schedule, int) ([]time.Time, error)    { return nil, nil }

// TestAddPushAndPR: --push needs the channel bound to a repository, --pr
// a forge for it too; each refusal says why, and nothing is added.
func TestAddPushAndPR(t *testing.T) {
	tests := []struct {
		name  string
		repos Repos
		line  string
		said  string
		added *store.Schedule
	}{
		{name: "--pr in a channel without a repository", repos: fakeRepos{}, line: `"0 2 * * *" --pr chore`,
			said: "Not scheduled: --pr needs a repository bound to this channel"},
		{name: "--pr without any workspaces", line: `"0 2 * * *" --pr chore`,
			said: "Not scheduled: --pr needs a repository bound to this channel"},
		{name: "--pr where the repository has no forge", repos: fakeRepos{repo: "/srv/api.git"}, line: `"0 2 * * *" --pr chore`,
			said: "Not scheduled: --pr needs a forge for this channel's repository, to open the pull request on: the bot's operator names it in CLAUDEOPS_FORGES"},
		{name: "--push needs no forge", repos: fakeRepos{repo: "/srv/api.git"}, line: `"0 2 * * *" --push chore`,
			said: "Schedule 1: ", added: &store.Schedule{Push: true}},
		{name: "--pr with a forge pushes too", repos: fakeRepos{repo: "/srv/api.git", forged: true}, line: `"0 2 * * *" --pr chore`,
			said: "Schedule 1: ", added: &store.Schedule{Push: true, PR: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := threadtest.New("main", "alice")
			e := New(Config{Repos: tt.repos, MaxPerUser: -1})
			e.Init(ft)
			sc := &fakeScheduling{}
			e.SetScheduler(sc)
			p := e.Attach(ft).(*part)
			p.cmdSchedule(context.Background(), adapters.Event{User: adapters.User{ID: "alice"}}, []string{"add " + tt.line})
			if said := strings.Join(ft.Said, "\n"); !strings.HasPrefix(said, tt.said) {
				t.Errorf("said %q, want %q…", said, tt.said)
			}
			switch {
			case tt.added == nil && len(sc.added) != 0:
				t.Errorf("added %+v", sc.added)
			case tt.added != nil && (len(sc.added) != 1 || sc.added[0].Push != tt.added.Push || sc.added[0].PR != tt.added.PR):
				t.Errorf("added %+v, want push %v pr %v", sc.added, tt.added.Push, tt.added.PR)
			}
		})
	}
}

// TestListAndRunsNamePR: `schedule list` says a --pr schedule opens a
// pull request; `schedule runs` names each run's.
func TestListAndRunsNamePR(t *testing.T) {
	ft := threadtest.New("main", "alice")
	ft.Records.Schedules = []store.Schedule{
		{ID: 1, Spec: "30 2 * * *", Prompt: "chore", Platform: "console", Channel: "console", CreatedBy: "alice", Push: true, PR: true},
		{ID: 2, Spec: "0 3 * * *", Prompt: "push only", Platform: "console", Channel: "console", CreatedBy: "alice", Push: true},
	}
	ft.Records.RunsOf = map[int64][]store.ScheduleRun{1: {{ScheduleID: 1, Status: "succeeded", Branch: "claudeops/schedule-1-20261129-0230",
		Commit: "0123456789abcdef", PR: "https://forge.example/acme/api/pulls/4"}}}
	e := New(Config{})
	e.Init(ft)
	e.SetScheduler(&fakeScheduling{})
	p := e.Attach(ft).(*part)
	ctx := context.Background()
	p.cmdSchedule(ctx, adapters.Event{User: adapters.User{ID: "alice"}}, []string{"list"})
	p.cmdSchedule(ctx, adapters.Event{User: adapters.User{ID: "alice"}}, []string{"runs 1"})
	said := strings.Join(ft.Said, "\n")
	for _, want := range []string{"1. `30 2 * * *` — chore · by alice · pushes its branch and opens a pull request\n",
		"2. `0 3 * * *` — push only · by alice · pushes its branch\n",
		"branch `claudeops/schedule-1-20261129-0230` at 0123456789 · pull request https://forge.example/acme/api/pulls/4"} {
		if !strings.Contains(said+"\n", want) {
			t.Errorf("said %q, want %q", said, want)
		}
	}
}
