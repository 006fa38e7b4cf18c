//go:build !nodocker

package main

import "github.com/claudeops/claudeops/claudeproc/docker"

// dockerRunner is the docker runner's settings. A build with -tags
// nodocker has a stand-in instead (runner_nodocker.go), so that the
// engine's client is not linked.
type dockerRunner = docker.Settings
