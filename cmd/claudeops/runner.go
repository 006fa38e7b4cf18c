package main

import (
	"fmt"

	"github.com/claudeops/claudeops/claudeproc"
)

// runnerConfig picks where sessions' claude processes run
// (CLAUDEOPS_RUNNER) and how.
type runnerConfig struct {
	Kind string `env:"CLAUDEOPS_RUNNER" envDefault:"local"`
}

// validate lists what is wrong, all at once.
func (r runnerConfig) validate() []string {
	switch r.Kind {
	case "local":
		return nil
	}
	return []string{fmt.Sprintf("CLAUDEOPS_RUNNER must be local, got %q", r.Kind)}
}

// buildRunner makes the configured runner.
func buildRunner(cfg config) (claudeproc.Runner, error) {
	switch cfg.Runner.Kind {
	case "local":
		return claudeproc.Local{}, nil
	}
	return nil, fmt.Errorf("unknown runner %q", cfg.Runner.Kind)
}
