// Package kubernetes is the `kubernetes` runner: each session's Claude Code
// CLI runs in a Pod of its own, in a namespace the operator names, its
// stdin and stdout attached through the Kubernetes API (client-go's
// remotecommand), so that the protocol engine is the one of every runner.
//
// What a Pod gets: the operator's image (a channel's where its settings
// name one, Spec.Image: pulled as the cluster's policy for its tag says,
// its CLI not version-checked as the operator's is at start), the session's working directory
// from the work claim (a PersistentVolumeClaim the bot has mounted too, at
// the same path, by subPath: the Pod sees that directory and nothing else
// of the claim, and the Spec's Mounts, subPaths of the claim at their own
// paths or an emptyDir for an empty one: a worktree's git directory), the
// CLI's state (~/.claude) on the same claim per thread
// so that `--resume` works on any node (and no thread reaches another's
// shell snapshot or transcripts), a home on an emptyDir, resource
// requests and limits, a non-root user, no capabilities, no service-account
// token, no service links, the keys of an operator's Secret as environment
// (the model's credentials). What it does not get: any secret of the bot's
// (credential variables of Spec.Env are never written into a Pod spec,
// where anyone who may read Pods would see them), the bot's state, any
// other part of the claim.
//
// A build with -tags nokubernetes leaves this package out of the binary
// (client-go is half of it); cmd then refuses the runner.
//
// Supervision: the Pod is deleted when its session ends; Prepare deletes
// what a previous run of this instance left (by label) before any session
// starts; a Pod that is deleted or evicted ends its session with that
// reason, as a crashed process would; a Pod waiting for capacity is
// reported through Spec.Progress and given up after StartTimeout.
//
// # Files
//
//   - kubernetes.go: Config, Runner, Prepare (the verbs it needs checked
//     by SelfSubjectAccessReview, a previous run's Pods deleted by label);
//     its clients, the core and authorization groups' only. Its patterns
//     compile at first use: every default build links this package.
//   - start.go: a session's Pod started, its stdin and stdout attached
//     through the API server (remotecommand: WebSocket, SPDY as a
//     fallback) behind claudeproc.ImageLauncher, which waits for the
//     attach: the first line on stdin is "go", or the operator's MCP
//     servers' configuration, handed to the CLI as descriptor 3 through a
//     pipe, never in the Pod's spec; the thread's home on the claim.
//   - pod.go: the Pod spec (labels naming the instance, channel and thread,
//     hashed; annotations in plain words); credential.go: what looks like a
//     credential kept out of the spec (the model's credentials come only
//     from the operator's Secret, envFrom).
//   - watch.go, handle.go: capacity waits reported and timed out, a Pod
//     deleted, evicted or out of memory reported as the CLI's end; the Pod
//     deleted at its session's end.
//   - probe.go: `claude --version` in a Pod; settings.go: Settings, its
//     env tags, its checks, the runner built.
package kubernetes
