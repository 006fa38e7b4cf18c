package scheduled

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/claudeops/claudeops/store"
)

// addOption is an option of `schedule add`, before its prompt: one table
// that options reads with and help shows (optionsUsage, optionsHelp).
type addOption struct {
	name string
	arg  string // "" for a flag, else what its value is, e.g. "<duration>"
	help string
	// set applies it; d is its duration, for an option with an arg.
	set func(s *store.Schedule, d time.Duration)
}

var addOptions = []addOption{
	{name: "--park", help: "requests wait for the creator or an admin instead of being denied",
		set: func(s *store.Schedule, _ time.Duration) { s.ApprovalPolicy = "park" }},
	{name: "--queue", help: "a slot due while a run still runs waits for it instead of being skipped",
		set: func(s *store.Schedule, _ time.Duration) { s.Overlap = "queue" }},
	{name: "--push", help: "a run that changed files commits them and pushes its branch",
		set: func(s *store.Schedule, _ time.Duration) { s.Push = true }},
	{name: "--pr", help: "as --push, and opens a pull request, or updates the schedule's one still open",
		set: func(s *store.Schedule, _ time.Duration) { s.Push, s.PR = true, true }},
	{name: "--timeout", arg: "<duration>", help: "a run's time limit (e.g. 45m)",
		set: func(s *store.Schedule, d time.Duration) { s.Timeout = d }},
	{name: "--catch-up", arg: "<duration>", help: "after downtime, how late a missed slot still runs (e.g. 1h)",
		set: func(s *store.Schedule, d time.Duration) { s.CatchUp = d }},
}

// form is the option as written: "--timeout <duration>".
func (o addOption) form() string {
	if o.arg == "" {
		return o.name
	}
	return o.name + " " + o.arg
}

// optionsUsage is each option, optional, as the usage shows them: "[--park] … ".
func optionsUsage() string {
	var b strings.Builder
	for _, o := range addOptions {
		fmt.Fprintf(&b, "[%s] ", o.form())
	}
	return b.String()
}

// optionsHelp says what each option does.
func optionsHelp() string {
	parts := make([]string, len(addOptions))
	for i, o := range addOptions {
		parts[i] = "`" + o.form() + "` " + o.help
	}
	return strings.Join(parts, "; ")
}

// options reads the options (addOptions) that may come before the
// prompt, and returns the prompt.
func options(s *store.Schedule, rest string) (string, error) {
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "--") {
		name, tail := splitWord(rest)
		i := indexOption(name)
		if i < 0 {
			forms := make([]string, len(addOptions))
			for i, o := range addOptions {
				forms[i] = o.form()
			}
			return "", fmt.Errorf("unknown option %s (options: %s)", name, strings.Join(forms, ", "))
		}
		o := addOptions[i]
		var d time.Duration
		if o.arg != "" {
			val, after := splitWord(tail)
			var err error
			if d, err = time.ParseDuration(val); err != nil || d <= 0 {
				return "", fmt.Errorf("%s wants a duration such as 45m, not %q", name, val)
			}
			tail = after
		}
		o.set(s, d)
		rest = strings.TrimSpace(tail)
	}
	if rest == "" {
		return "", errors.New("the prompt is missing")
	}
	return rest, nil
}

func indexOption(name string) int {
	for i, o := range addOptions {
		if o.name == name {
			return i
		}
	}
	return -1
}
