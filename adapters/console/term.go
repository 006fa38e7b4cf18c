package console

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// inputEchoed reports whether what the operator types shows in the output
// by itself: in and out are one terminal, and that terminal echoes input
// (its usual cooked mode). Their Enter then ends whatever line was being
// written.
func inputEchoed(in io.Reader, out io.Writer) bool {
	fi, ok1 := in.(*os.File)
	fo, ok2 := out.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	ti, err := unix.IoctlGetTermios(int(fi.Fd()), unix.TCGETS)
	if err != nil || ti.Lflag&unix.ECHO == 0 {
		return false
	}
	if _, err := unix.IoctlGetTermios(int(fo.Fd()), unix.TCGETS); err != nil {
		return false
	}
	var si, so unix.Stat_t
	if unix.Fstat(int(fi.Fd()), &si) != nil || unix.Fstat(int(fo.Fd()), &so) != nil {
		return false
	}
	return si.Rdev == so.Rdev
}
