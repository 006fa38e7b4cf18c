package main

import (
	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/bot"
)

// consolePlatform is the terminal: the person at it is the operator.
type consolePlatform struct{ console.Options }

// configured: never by settings; the console stands in when no platform
// is configured.
func (p *consolePlatform) configured() bool { return false }

func (p *consolePlatform) checks() []problem {
	return []problem{atLeast("CLAUDEOPS_CONSOLE_MAX_LINE", p.MaxLine, 1, "")}
}

func (p *consolePlatform) startChecks(config) []problem { return nil }

// configureBot: the person at the console is the operator: allowed, and
// an admin.
func (p *consolePlatform) configureBot(c *bot.Config) {
	c.AllowedUsers = append(c.AllowedUsers, console.OperatorID)
	c.Admins = append(c.Admins, console.OperatorID)
}

func (p *consolePlatform) build(w wiring) (adapters.Adapter, error) {
	opts := p.Options
	opts.In, opts.Out = w.stdin, w.stdout
	return console.New(opts), nil
}
