package claudeproc

import (
	"context"
	"syscall"
	"time"
)

// Close ends the process in bounded time: it interrupts a running turn,
// closes stdin (the CLI exits once idle), then sends SIGTERM and finally
// SIGKILL to the whole process group, waiting StopGrace between steps. It
// returns how the process ended. Safe to call more than once.
func (p *Process) Close(ctx context.Context) ExitInfo {
	p.stopOnce.Do(func() { p.stop(ctx) })
	return p.ExitInfo()
}

func (p *Process) stop(ctx context.Context) {
	select {
	case <-p.exited:
		return
	default:
	}
	grace := p.opts.StopGrace
	if p.InTurn() {
		ictx, cancel := context.WithTimeout(ctx, min(grace, 2*time.Second))
		if _, err := p.Interrupt(ictx, true); err != nil {
			p.log.Debug("claude: interrupt before close failed", "err", err)
		}
		cancel()
	}
	p.closeStdin()
	if p.waitExit(ctx, grace) {
		return
	}
	p.setTerm("sent SIGTERM after stdin close was not enough")
	p.signalGroup(syscall.SIGTERM)
	if p.waitExit(ctx, grace) {
		return
	}
	p.setTerm("ignored SIGTERM for " + grace.String())
	p.signalGroup(syscall.SIGKILL)
	<-p.exited
}

func (p *Process) setTerm(s string) {
	p.mu.Lock()
	p.termState = s
	p.mu.Unlock()
}

// Kill ends the process group at once with SIGKILL.
func (p *Process) Kill() {
	p.setTerm("killed")
	p.signalGroup(syscall.SIGKILL)
	<-p.exited
}

// signalGroup signals everything of the session (the runner knows what
// that is, and does nothing once the process has been reaped).
func (p *Process) signalGroup(sig syscall.Signal) {
	if err := p.handle.Signal(sig); err != nil {
		p.log.Debug("claude: signal failed", "signal", signalName(sig), "err", err)
	}
}

func (p *Process) waitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (p *Process) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if !p.closed {
		p.closed = true
		p.stdin.Close()
	}
}

// CloseInput closes stdin: the CLI finishes the running turn and exits.
func (p *Process) CloseInput() { p.closeStdin() }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}
