package bashoracle

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Nobody is the unprivileged uid and gid commands run as when the tests
// run as root.
const Nobody = 65534

// User is who commands should run as: nobody, with no supplementary
// groups, when the process is root; nil (the current user) otherwise.
func User() *syscall.Credential {
	if os.Getuid() != 0 {
		return nil
	}
	return &syscall.Credential{Uid: Nobody, Gid: Nobody}
}

// Stubs are the programs a stub stands in for: every command the approvals
// corpus and its fuzzer name, and common ones a command might sneak in.
// bash, sh, env, true and false are not among them: a harness around the
// real CLI needs those real (Oracle stubs them as well).
var Stubs = []string{
	"git", "ls", "cat", "head", "tail", "wc", "grep", "npm", "go", "make", "touch", "rm", "mv", "cp",
	"curl", "wget", "xargs", "find", "sudo", "python3", "node", "sed", "awk",
	"tee", "chmod", "ln", "mkdir", "date", "id", "x", "sleep", "echo", "printf",
}

// LogsVar names the directory stubs log to; RunVar, when set, names the
// log file ("call.$RunVar"), else each stub process has its own
// ("call.<pid>").
const (
	LogsVar = "BASHORACLE_LOGS"
	RunVar  = "BASHORACLE_RUN"
)

// stub appends its argc, base name and arguments, each NUL-terminated.
const stub = "#!/bin/sh\nprintf '%s\\0' \"$#\" \"${0##*/}\" \"$@\" >>\"$" + LogsVar + "/call.${" + RunVar + ":-$$}\"\n"

// WriteStubs writes a logging stub for each name into dir.
func WriteStubs(dir string, names []string) error {
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(stub), 0o755); err != nil {
			return fmt.Errorf("write stub: %w", err)
		}
	}
	return nil
}

// Trap is the oracle's addition to a Bash script: set -T, so that the
// trap reaches functions, subshells and substitutions, and a DEBUG trap
// that prints each simple command, NUL-terminated, to redir (">&3",
// ">>file").
func Trap(redir string) string {
	return "set -T\ntrap 'builtin printf \"%s\\0\" \"$BASH_COMMAND\" " + redir + "' DEBUG\n"
}

// Records splits a trace or log into its NUL-terminated records; an
// unterminated tail is dropped.
func Records(b []byte) []string {
	recs := strings.Split(string(b), "\x00")
	return recs[:len(recs)-1]
}

// ReadCalls reads one stub log: argc, then the base name and the
// arguments.
func ReadCalls(name string) ([][]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("stub log: %w", err)
	}
	fields := Records(b)
	var calls [][]string
	for len(fields) > 0 {
		n, err := strconv.Atoi(fields[0])
		if err != nil || n < 0 || n+2 > len(fields) {
			return nil, fmt.Errorf("stub log %s: bad record %q", name, fields)
		}
		calls = append(calls, fields[1:n+2])
		fields = fields[n+2:]
	}
	return calls, nil
}

// seed are the files a work directory starts with: something for globs to
// find and for redirections to clobber.
var seed = map[string]string{"f": "keep\n", "a.go": "package a\n", "-rf": "", "README.md": "# x\n"}

// Seed writes the starting files into dir, owned by cred's user.
func Seed(dir string, cred *syscall.Credential) error {
	for name, content := range seed {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("seed work dir: %w", err)
		}
		if err := own(p, cred); err != nil {
			return err
		}
	}
	return nil
}

// MakeDirs creates each directory 0755, owned by cred's user (nil: ours),
// so that a command run as that user could change what is in it.
func MakeDirs(cred *syscall.Credential, dirs ...string) error {
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("oracle dir: %w", err)
		}
		if err := own(d, cred); err != nil {
			return err
		}
	}
	return nil
}

func own(name string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(name, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("oracle chown: %w", err)
	}
	return nil
}

// Snapshot maps each entry under dir to its type, mode and, for a regular
// file, content hash.
func Snapshot(dir string) (map[string]string, error) {
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		m[p[len(dir)+1:]] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return m, nil
}

// Changed lists, sorted, the entries created, changed or removed between
// two snapshots.
func Changed(before, after map[string]string) []string {
	var out []string
	for name, sum := range after {
		if before[name] != sum {
			out = append(out, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
