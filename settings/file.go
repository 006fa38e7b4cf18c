package settings

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The settings file (CLAUDEOPS_SETTINGS_FILE), YAML:
//
//	bot:                    # every channel
//	  model: sonnet
//	platforms:
//	  matrix: { reply: mention }
//	workspaces:
//	  slack/T0123ABCD: { admins: [U0AAAA1111] }
//	channels:
//	  slack/C0PAYMENTS:
//	    label: "#payments"    # for people only; the id is what counts
//	    instructions: |
//	      Always run the linter before committing.
//	    model: opus
//	    budget: { thread: 2, channel_day: 20 }
//
// A scope's settings are the names of Specs, but the budgets, which are
// nested under budget. Every problem is reported with its line, all at
// once; a file with any problem gives no values.

// Problem is one thing wrong in a settings file.
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) Error() string { return fmt.Sprintf("line %d: %s", p.Line, p.Msg) }

// Problems is every problem of one file.
type Problems []Problem

func (ps Problems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "; ")
}

var (
	slackChannelRe   = regexp.MustCompile(`^(T[A-Z0-9]{2,}/)?[CDG][A-Z0-9]{2,}$`)
	slackTeamRe      = regexp.MustCompile(`^T[A-Z0-9]{2,}$`)
	matrixRoomRe     = regexp.MustCompile(`^![^\s:]+:[^\s]+$`)
	matrixServerRe   = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]+)?$`)
	consoleChannelRe = regexp.MustCompile(`^[^\s/]+$`)
)

// Parse reads a settings file's content. The layer is empty unless the
// error is nil; the error is Problems.
func Parse(data []byte) (Layer, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Layer{}, Problems{{Line: yamlLine(err), Msg: err.Error()}}
	}
	p := &parser{}
	if len(doc.Content) == 1 {
		p.top(doc.Content[0])
	} else if len(doc.Content) > 1 {
		p.bad(doc.Content[1], "one YAML document only")
	}
	if len(p.problems) > 0 {
		return Layer{}, p.problems
	}
	return p.layer, nil
}

type parser struct {
	layer    Layer
	problems Problems
}

func (p *parser) bad(n *yaml.Node, format string, args ...any) {
	p.problems = append(p.problems, Problem{Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

// pairs walks a mapping's keys and values, reporting a duplicate key.
func (p *parser) pairs(n *yaml.Node, what string, each func(k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return
		}
		p.bad(n, "%s: a mapping", what)
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if line, dup := seen[k.Value]; dup {
			p.bad(k, "%s: %q given twice (first at line %d)", what, k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		each(k, v)
	}
}

func (p *parser) top(n *yaml.Node) {
	p.pairs(n, "the file", func(k, v *yaml.Node) {
		switch k.Value {
		case "bot":
			p.scope(Bot, v)
		case "platforms":
			p.pairs(v, "platforms", func(k, v *yaml.Node) {
				if !slices.Contains([]string{"slack", "matrix", "console"}, k.Value) {
					p.bad(k, "unknown platform %q: slack, matrix or console", k.Value)
					return
				}
				p.scope(Scope{LevelPlatform, k.Value}, v)
			})
		case "workspaces":
			p.pairs(v, "workspaces", func(k, v *yaml.Node) {
				if why := badWorkspace(k.Value); why != "" {
					p.bad(k, "workspace %q: %s", k.Value, why)
					return
				}
				p.scope(Scope{LevelWorkspace, k.Value}, v)
			})
		case "channels":
			p.pairs(v, "channels", func(k, v *yaml.Node) {
				if why := badChannel(k.Value); why != "" {
					p.bad(k, "channel %q: %s", k.Value, why)
					return
				}
				p.scope(Scope{LevelChannel, k.Value}, v)
			})
		default:
			p.bad(k, "unknown key %q: bot, platforms, workspaces or channels", k.Value)
		}
	})
}

func badWorkspace(key string) string {
	platform, id, _ := strings.Cut(key, "/")
	switch {
	case platform == "slack" && slackTeamRe.MatchString(id):
	case platform == "matrix" && matrixServerRe.MatchString(id):
	default:
		return "a Slack team (slack/T0123ABCD) or a Matrix server (matrix/example.org)"
	}
	return ""
}

func badChannel(key string) string {
	platform, id, _ := strings.Cut(key, "/")
	switch {
	case platform == "slack" && slackChannelRe.MatchString(id):
	case platform == "matrix" && matrixRoomRe.MatchString(id):
	case platform == "console" && consoleChannelRe.MatchString(id):
	default:
		return "a channel id with its platform: slack/C0123ABCD, matrix/!room:example.org or console/console"
	}
	return ""
}

// scope reads one scope's settings.
func (p *parser) scope(s Scope, n *yaml.Node) {
	label := ""
	var got []func()
	p.pairs(n, s.String(), func(k, v *yaml.Node) {
		switch {
		case k.Value == "label":
			if v.Kind != yaml.ScalarNode || s.Level == LevelBot {
				p.bad(v, "label: a short text naming a platform, workspace or channel")
				return
			}
			label = v.Value
		case k.Value == "budget":
			p.pairs(v, s.String()+" budget", func(k, v *yaml.Node) {
				name := Name("budget." + k.Value)
				if spec, ok := Lookup(name); ok {
					got = append(got, p.value(s, spec, v, &label))
					return
				}
				p.bad(k, "unknown budget %q: thread, channel_day or schedule_run", k.Value)
			})
		default:
			spec, ok := Lookup(Name(k.Value))
			if !ok || strings.HasPrefix(k.Value, "budget.") {
				p.bad(k, "unknown setting %q at %s", k.Value, s)
				return
			}
			got = append(got, p.value(s, spec, v, &label))
		}
	})
	for _, put := range got {
		put()
	}
}

// value checks one setting's node; what it returns puts it in the layer
// once the scope's label is known.
func (p *parser) value(s Scope, spec Spec, n *yaml.Node, label *string) func() {
	text, ok := p.text(spec, n)
	if !ok {
		return func() {}
	}
	canon, err := spec.Parse(text)
	if err != nil {
		p.bad(n, "%s", err)
		return func() {}
	}
	return func() {
		p.layer.Put(spec.Name, Value{Text: canon, Source: Source{Scope: s, Origin: FromFile, Line: n.Line, Label: *label}})
	}
}

// text is a node's value as Spec.Parse reads it: a scalar, or a list's
// entries comma-joined for a list setting.
func (p *parser) text(spec Spec, n *yaml.Node) (string, bool) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		return n.Value, true
	case n.Kind == yaml.SequenceNode && (spec.Kind == KindUsers || spec.Kind == KindNames):
		var items []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || strings.ContainsAny(c.Value, ", ") {
				p.bad(c, "%s: each entry one id or name", spec.Name)
				return "", false
			}
			items = append(items, c.Value)
		}
		return strings.Join(items, ","), true
	}
	p.bad(n, "%s: a value (%s)", spec.Name, spec.Help)
	return "", false
}

var yamlLineRe = regexp.MustCompile(`line (\d+)`)

// yamlLine is the line a YAML syntax error names, or 0.
func yamlLine(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		var n int
		fmt.Sscan(m[1], &n)
		return n
	}
	return 0
}
