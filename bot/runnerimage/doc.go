// Package runnerimage is the extension (package thread) that gives a
// channel's sessions the runner's image its settings name: the `image`
// setting (package settings: bot admins' only, for an image decides what a
// session's tools are; from the settings file or chat), read at each
// launch through Host.Scopes, so a change reaches the channel's next
// session. The runner checks the image as it checks its own
// (claudeproc.Spec.Image).
//
// Only the runners with images (docker, kubernetes) use it. A runner
// without images (local, sandbox) has nothing to replace: the
// setting is ignored at launch and `status` says so, as it says which
// image the channel's sessions run from and where that comes from.
//
// Hooks (thread): Launcher (the image), Statuser (what `status` says).
//
// Files: runnerimage.go.
package runnerimage
