package triggers

import "slices"

// takes says whether the event (its type and parsed body) passes one of
// t's filters. A generic trigger takes every event.
func (t *Trigger) takes(event string, body map[string]any) bool {
	if t.Kind == KindGeneric {
		return true
	}
	if t.Review {
		// Its events are those about a pull request's conversation; on,
		// when given, narrows them.
		return isReviewEvent(t.Kind, event) && (len(t.On) == 0 || slices.ContainsFunc(t.On, func(f Filter) bool { return f.match(event, body) }))
	}
	return slices.ContainsFunc(t.On, func(f Filter) bool { return f.match(event, body) })
}

func (f Filter) match(event string, body map[string]any) bool {
	if f.Event != event {
		return false
	}
	if f.Action != "" && str(body["action"]) != f.Action {
		return false
	}
	if f.Label != "" && !hasLabel(body, f.Label) {
		return false
	}
	return f.State == "" || state(body) == f.State
}

// hasLabel: the label just added (GitHub's "labeled": label.name) or one
// of the or pull request's labels (Gitea's "label_updated").
func hasLabel(body map[string]any, name string) bool {
	if l, ok := body["label"].(map[string]any); ok && str(l["name"]) == name {
		return true
	}
	for _, k := range []string{"issue", "pull_request"} {
		o, _ := body[k].(map[string]any)
		labels, _ := o["labels"].([]any)
		for _, l := range labels {
			if m, ok := l.(map[string]any); ok && str(m["name"]) == name {
				return true
			}
		}
	}
	return false
}

// state: a commit status's state, else a check run's, check suite's or
// workflow run's conclusion.
func state(body map[string]any) string {
	if s := str(body["state"]); s != "" {
		return s
	}
	for _, k := range []string{"check_run", "check_suite", "workflow_run"} {
		if o, ok := body[k].(map[string]any); ok {
			return str(o["conclusion"])
		}
	}
	return ""
}

// repo is the event's repository's full name ("" when it names none).
func repo(body map[string]any) string {
	r, _ := body["repository"].(map[string]any)
	return str(r["full_name"])
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
