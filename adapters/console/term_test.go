package console

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal (posix_openpt, unlockpt, ptsname
// through /dev/ptmx) and returns its slave side.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestInputEchoed: typed input shows by itself only when input and output
// are one terminal that echoes.
func TestInputEchoed(t *testing.T) {
	a, b := openTerminal(t), openTerminal(t)
	noEcho := openTerminal(t)
	ti, err := unix.IoctlGetTermios(int(noEcho.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	ti.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(int(noEcho.Fd()), unix.TCSETS, ti); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	tests := []struct {
		name    string
		in, out *os.File
		want    bool
	}{
		{"one terminal", a, a, true},
		{"two terminals", a, b, false},
		{"a terminal that does not echo", noEcho, noEcho, false},
		{"a pipe in, a terminal out", r, a, false},
		{"a terminal in, a pipe out", a, w, false},
	}
	for _, tt := range tests {
		if got := inputEchoed(tt.in, tt.out); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
