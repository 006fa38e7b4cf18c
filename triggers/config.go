package triggers

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/claudeops/claudeops/settings"
)

// The triggers file (CLAUDEOPS_TRIGGERS_FILE), YAML:
//
//	triggers:
//	  - name: issue-labelled
//	    kind: gitea                    # gitea, github or generic
//	    channel: slack/C0PAYMENTS      # <platform>/<channel>: where its threads start
//	    secret_file: /run/secrets/gitea-hook   # HMAC key (gitea, github) or bearer token (generic)
//	    repos: [acme/api]              # forge kinds: the repositories it is for
//	    on:                            # forge kinds: the events it takes (any one)
//	      - { event: issues, action: label_updated, label: claude }
//	      - { event: status, state: failure }
//	    per_hour: 10                   # at most this many runs an hour
//	    prompt: |
//	      Look into issue #{{.issue.number}}: {{.issue.title}}
//	  - name: reviews
//	    kind: gitea
//	    review: true                   # comments and reviews on the bot's pull requests
//	    secret_file: /run/secrets/gitea-hook
//	    repos: [acme/api]
//	    per_hour: 60
//
// A review trigger (review.go) has no channel and no prompt: an event about
// a pull request the bot opened goes into the thread that opened it, and
// costs no model call; its on, when given, narrows the events further.
//
// Every problem is reported with its line, all at once; a file with any
// problem gives no trigger. Secrets are read from files, never written
// in this one.

// Kinds of trigger.
const (
	KindGitea   = "gitea"
	KindGitHub  = "github"
	KindGeneric = "generic"
)

// Trigger is one configured trigger.
type Trigger struct {
	Name string
	Kind string
	// Platform and Channel are where its threads start.
	Platform, Channel string
	Repos             []string
	On                []Filter
	PerHour           int
	// Review: the trigger routes comments and reviews on the bot's pull
	// requests to the threads that opened them (review.go).
	Review bool
	// SecretFile is where its secret was read from (said, never the secret).
	SecretFile string
	Line       int
	secret     []byte
	prompt     *template.Template
}

// Filter is one kind of event a forge trigger takes; an empty field
// matches anything.
type Filter struct {
	Event  string `yaml:"event"`
	Action string `yaml:"action"`
	Label  string `yaml:"label"`
	State  string `yaml:"state"`
}

// Problems is every problem of one file, each with its line (the
// settings file's kind).
type Problems = settings.Problems

type rawTrigger struct {
	Name       string   `yaml:"name"`
	Kind       string   `yaml:"kind"`
	Channel    string   `yaml:"channel"`
	SecretFile string   `yaml:"secret_file"`
	Repos      []string `yaml:"repos"`
	On         []Filter `yaml:"on"`
	PerHour    int      `yaml:"per_hour"`
	Prompt     string   `yaml:"prompt"`
	Review     bool     `yaml:"review"`
}

var (
	nameRe     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	channelRe  = regexp.MustCompile(`^(slack|matrix|console)/\S+$`)
	repoRe     = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	triggerKey = []string{"name", "kind", "channel", "secret_file", "repos", "on", "per_hour", "prompt", "review"}
)

// Parse reads a triggers file's content; readSecret reads a secret_file
// (cmd's: the same rules as the _FILE variables). The error is Problems.
func Parse(data []byte, readSecret func(path string) ([]byte, error)) ([]Trigger, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Problems{{Line: 1, Msg: err.Error()}}
	}
	p := &parser{readSecret: readSecret, names: map[string]int{}}
	if len(doc.Content) > 0 {
		p.top(doc.Content[0])
	}
	if len(p.problems) > 0 {
		return nil, p.problems
	}
	return p.triggers, nil
}

type parser struct {
	readSecret func(string) ([]byte, error)
	names      map[string]int
	triggers   []Trigger
	problems   Problems
}

func (p *parser) bad(n *yaml.Node, format string, args ...any) {
	p.problems = append(p.problems, settings.Problem{Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) top(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.bad(n, "the file is a mapping with one key, triggers")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "triggers" {
			p.bad(k, "unknown key %q (the file has one key, triggers)", k.Value)
			continue
		}
		if v.Kind != yaml.SequenceNode {
			p.bad(v, "triggers is a list")
			continue
		}
		for _, item := range v.Content {
			p.trigger(item)
		}
	}
}

func (p *parser) trigger(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.bad(n, "a trigger is a mapping (name, kind, channel, …)")
		return
	}
	for i := 0; i < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(triggerKey, k.Value) {
			p.bad(k, "unknown key %q (keys: %s)", k.Value, strings.Join(triggerKey, ", "))
		}
	}
	var raw rawTrigger
	if err := n.Decode(&raw); err != nil {
		p.bad(n, "%v", err)
		return
	}
	before := len(p.problems)
	t := Trigger{Name: raw.Name, Kind: raw.Kind, Repos: raw.Repos, On: raw.On, PerHour: raw.PerHour, SecretFile: raw.SecretFile, Review: raw.Review, Line: n.Line}
	p.checkName(n, raw.Name)
	switch raw.Kind {
	case KindGitea, KindGitHub:
		p.checkForge(n, raw)
	case KindGeneric:
		if len(raw.Repos) > 0 || len(raw.On) > 0 || raw.Review {
			p.bad(n, "trigger %q: repos, on and review are for gitea and github triggers", raw.Name)
		}
	default:
		p.bad(n, "trigger %q: kind %q is not gitea, github or generic", raw.Name, raw.Kind)
	}
	if raw.PerHour <= 0 {
		p.bad(n, "trigger %q: per_hour (at most this many runs an hour) must be above 0", raw.Name)
	}
	t.secret = p.secret(n, raw)
	if raw.Review {
		if raw.Channel != "" || raw.Prompt != "" {
			p.bad(n, "trigger %q: a review trigger has no channel nor prompt (an event goes into the thread that opened the pull request)", raw.Name)
		}
	} else {
		t.Platform, t.Channel = p.channel(n, raw)
		t.prompt = p.template(n, raw)
	}
	if len(p.problems) == before {
		p.triggers = append(p.triggers, t)
	}
}

func (p *parser) channel(n *yaml.Node, raw rawTrigger) (platform, channel string) {
	if !channelRe.MatchString(raw.Channel) {
		p.bad(n, "trigger %q: channel %q is not <platform>/<channel> (slack, matrix or console)", raw.Name, raw.Channel)
		return "", ""
	}
	platform, channel, _ = strings.Cut(raw.Channel, "/")
	return platform, channel
}

func (p *parser) checkName(n *yaml.Node, name string) {
	if !nameRe.MatchString(name) {
		p.bad(n, "name %q: lower-case letters, digits and -, at most 63 (it is the endpoint's path)", name)
		return
	}
	if line, ok := p.names[name]; ok {
		p.bad(n, "trigger %q is also at line %d", name, line)
		return
	}
	p.names[name] = n.Line
}

func (p *parser) checkForge(n *yaml.Node, raw rawTrigger) {
	if len(raw.Repos) == 0 {
		p.bad(n, "trigger %q: a %s trigger lists the repositories it is for (repos: [owner/name])", raw.Name, raw.Kind)
	}
	for _, r := range raw.Repos {
		if !repoRe.MatchString(r) {
			p.bad(n, "trigger %q: repository %q is not owner/name", raw.Name, r)
		}
	}
	if len(raw.On) == 0 && !raw.Review {
		p.bad(n, "trigger %q: a %s trigger says which events it takes (on: [{event: …, action: …}])", raw.Name, raw.Kind)
	}
	for _, f := range raw.On {
		if f.Event == "" {
			p.bad(n, "trigger %q: each of on names an event (e.g. issues, pull_request, status)", raw.Name)
		}
	}
}

func (p *parser) secret(n *yaml.Node, raw rawTrigger) []byte {
	if raw.SecretFile == "" {
		p.bad(n, "trigger %q: secret_file is missing (the HMAC key or bearer token, in a file)", raw.Name)
		return nil
	}
	b, err := p.readSecret(raw.SecretFile)
	if err != nil {
		p.bad(n, "trigger %q: secret_file: %v", raw.Name, err)
		return nil
	}
	b = bytes.TrimSpace(b)
	if len(b) < 16 {
		p.bad(n, "trigger %q: the secret in %s is shorter than 16 bytes", raw.Name, raw.SecretFile)
		return nil
	}
	return b
}

func (p *parser) template(n *yaml.Node, raw rawTrigger) *template.Template {
	if strings.TrimSpace(raw.Prompt) == "" {
		p.bad(n, "trigger %q: prompt is missing", raw.Name)
		return nil
	}
	t, err := template.New(raw.Name).Option("missingkey=zero").Parse(raw.Prompt)
	if err != nil {
		p.bad(n, "trigger %q: prompt: %v", raw.Name, err)
		return nil
	}
	return t
}
