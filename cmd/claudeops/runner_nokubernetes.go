//go:build nokubernetes

package main

// kubernetesRunner stands in for the kubernetes runner this build leaves
// out (-tags nokubernetes): client-go is not linked.
type kubernetesRunner = leftOut[kubernetesName]

type kubernetesName struct{}

func (kubernetesName) Name() string { return "kubernetes" }
func (kubernetesName) tag() string  { return "nokubernetes" }
