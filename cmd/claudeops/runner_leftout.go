//go:build nokubernetes || nodocker

package main

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/claudeproc"
)

// leftOut is a runner a build leaves out by a tag, so as not to link (nor
// initialise) its client: a deployment that does not use it holds less
// memory (docs/PERFORMANCE.md). Its name still picks it, so that the
// operator is told at load why it cannot run rather than that it does not
// exist. N names it and its tag.
type leftOut[N interface {
	Name() string
	tag() string
}] struct{}

// Name is CLAUDEOPS_RUNNER's value for the runner left out.
func (leftOut[N]) Name() string { var n N; return n.Name() }

// Check refuses the runner: this build has not got it.
func (leftOut[N]) Check(claudeproc.Host) []claudeproc.Problem {
	var n N
	return []claudeproc.Problem{{Var: "CLAUDEOPS_RUNNER", Value: n.Name(), Want: fmt.Sprintf(
		"a runner this build has: it was built with -tags %s, which leaves the %s runner out; build without that tag (as the Dockerfile does)",
		n.tag(), n.Name())}}
}

// HostCheck has nothing to check: Check has refused it.
func (leftOut[N]) HostCheck(claudeproc.Host) []claudeproc.Problem { return nil }

// Build fails: Check refuses the runner before a start gets here.
func (leftOut[N]) Build(context.Context, claudeproc.Host) (claudeproc.Runner, claudeproc.VersionInfo, error) {
	var n N
	return nil, claudeproc.VersionInfo{}, fmt.Errorf("the %s runner is not in this build (-tags %s)", n.Name(), n.tag())
}

// OwnDirs: none, it keeps nothing.
func (leftOut[N]) OwnDirs(claudeproc.Host, bool) []string { return nil }

// ImageCLI: false, it runs nothing.
func (leftOut[N]) ImageCLI() bool { return false }
