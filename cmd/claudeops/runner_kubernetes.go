//go:build !nokubernetes

package main

import "github.com/claudeops/claudeops/claudeproc/kubernetes"

// kubernetesRunner is the kubernetes runner's settings. A build with
// -tags nokubernetes has a stand-in instead (runner_nokubernetes.go), so
// that client-go, its API types and their scheme are not linked.
type kubernetesRunner = kubernetes.Settings
