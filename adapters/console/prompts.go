package console

import (
	"context"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

// Ask implements adapters.Adapter: the prompt and how to answer it.
func (a *Adapter) Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref := adapters.MessageRef{Thread: t, ID: a.nextID()}
	th := t.Thread
	switch p.Kind {
	case adapters.PromptApproval:
		// Every line of what is asked, whatever its length.
		a.printf(th, "? approval %s: %s", p.ID, p.Title)
		for _, l := range lines(p.Detail) {
			a.printf(th, "    %s", l)
		}
		a.printNote(th, p.Note)
		var typed []string
		for _, c := range p.Choices {
			typed = append(typed, c.Typed)
		}
		a.printf(th, "  reply: %s", strings.Join(typed, " | "))
	case adapters.PromptQuestion:
		a.printQuestions(th, p)
		a.printNote(th, p.Note)
	}
	return ref, a.flush()
}

func (a *Adapter) printQuestions(th string, p adapters.Prompt) {
	for i, q := range p.Questions {
		head := q.Text
		if q.Header != "" {
			head = "[" + q.Header + "] " + head
		}
		if len(p.Questions) > 1 {
			head = fmt.Sprintf("(%d/%d) %s", i+1, len(p.Questions), head)
		}
		a.printf(th, "? question %s: %s", p.ID, head)
		for j, o := range q.Options {
			if o.Description != "" {
				a.printf(th, "    %d. %s — %s", j+1, o.Label, o.Description)
			} else {
				a.printf(th, "    %d. %s", j+1, o.Label)
			}
		}
		if q.Multi {
			a.printf(th, "  reply: option numbers, comma-separated (e.g. 1,3), or your own answer")
		} else {
			a.printf(th, "  reply: an option number, or your own answer")
		}
	}
}

// printNote prints a prompt's note (Markdown, shown as written).
func (a *Adapter) printNote(th, note string) {
	if note == "" {
		return
	}
	for _, l := range lines(note) {
		a.printf(th, "  note: %s", l)
	}
}

// UpdatePrompt implements adapters.Adapter.
func (a *Adapter) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	kind := "approval"
	if p.Kind == adapters.PromptQuestion {
		kind = "question"
	}
	a.printf(ref.Thread.Thread, "! %s %s: %s", kind, p.ID, p.Outcome)
	return a.flush()
}

// Tell implements adapters.Teller: the console has one reader, so it is a
// notice addressed to the user.
func (a *Adapter) Tell(ctx context.Context, t adapters.ThreadRef, user adapters.User, text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.printf(t.Thread, "* (to %s) %s", user.ID, text)
	return a.flush()
}
