package claudeproc

// A Viewer is a runner whose sessions see less of the host's files than
// the bot does. The bot's own tools that read a session's files on its
// behalf (send_file) ask it, so that they see no more than the session.
type Viewer interface {
	// Hides reports whether the session cannot read p: an absolute host
	// path, symlinks resolved. It errs on the side of hiding (true when it
	// cannot tell).
	Hides(p string) bool
}

// Hides implements Viewer: p is hidden when it is, or lies inside, one of
// the paths the sandbox hides (Hide, the homes), resolved as a session's
// mounts are made. Resolved now rather than when the session started: a
// hidden path that did not exist then is not hidden in that session, so
// this may hide more than the session does, never less.
func (s Sandbox) Hides(p string) bool {
	hidden, err := resolveAll(append([]string{s.HomeBase}, s.Hide...))
	if err != nil {
		return true
	}
	return insideAny(p, hidden) != ""
}
