//go:build tools

// Package tools names the commands scripts/kubernetes builds, so that
// go.mod and go.sum hold everything they need.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
