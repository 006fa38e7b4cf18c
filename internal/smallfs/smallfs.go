// Package smallfs gives a test a real file system that can fill up or turn
// read-only under a running bot: a small ext4 image mounted through a loop
// device on a fresh directory. Storage faults are then the kernel's
// (ENOSPC, EROFS), not a fake's. Mounting needs root (CAP_SYS_ADMIN), loop
// devices and mkfs.ext4; where the machine lacks one the test is skipped,
// saying why.
package smallfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Mount mounts an ext4 file system of size bytes on a new directory under
// t.TempDir and returns it; it is unmounted when the test ends. No blocks
// are reserved for root, so the test (root) fills it as the bot would.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	base := t.TempDir()
	img, dir := filepath.Join(base, "fs.img"), filepath.Join(base, "smallfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", img).CombinedOutput(); err != nil {
		t.Skipf("no small file system here: mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop,errors=remount-ro", img, dir).CombinedOutput(); err != nil {
		t.Skipf("a small file system cannot be mounted here (%v: %s): needs root with CAP_SYS_ADMIN and loop devices", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		// Lazy: a process the test started may still hold a file open; the
		// loop device is freed with the last reference (autoclear).
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, ".smallfs-probe"), nil, 0o600); err != nil {
		t.Fatalf("the new small file system is not writable (%v): a loop device left read-only? (blockdev --setrw)", err)
	}
	return dir
}

// ReadOnly turns dir (from Mount) read-only under whoever has files open
// in it, as a disk error does with errors=remount-ro: ext4's abort. Every
// write from now on fails with EROFS. It cannot be made writable again.
func ReadOnly(t testing.TB, dir string) {
	t.Helper()
	// A remount with open writers fails (EBUSY); an abort does not ask.
	// mount reports the abort as an error even when it took effect, so the
	// effect is what is checked.
	out, _ := exec.Command("mount", "-o", "remount,abort", dir).CombinedOutput()
	probe := filepath.Join(dir, ".smallfs-probe")
	err := os.WriteFile(probe, nil, 0o600)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("abort %s did not make it read-only (mount said %q; a create gave %v)", dir, out, err)
	}
}

// Fill writes a file in dir until the file system is full, leaving at
// most slack bytes free, and returns its path: removing it frees the space
// again.
func Fill(t testing.TB, dir string, slack int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for n := free - slack; n > 0; n -= int64(len(chunk)) {
		if n < int64(len(chunk)) {
			chunk = chunk[:n]
		}
		if _, err := f.Write(chunk); err != nil {
			if strings.Contains(err.Error(), "no space") {
				break
			}
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil && !strings.Contains(err.Error(), "no space") {
		t.Fatal(err)
	}
	return path
}

// Free is how many bytes dir's file system has free.
func Free(t testing.TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}
