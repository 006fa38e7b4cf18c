//go:build nodocker

package main

// dockerRunner stands in for the docker runner this build leaves out
// (-tags nodocker): the engine's client is not linked.
type dockerRunner = leftOut[dockerName]

type dockerName struct{}

func (dockerName) Name() string { return "docker" }
func (dockerName) tag() string  { return "nodocker" }
