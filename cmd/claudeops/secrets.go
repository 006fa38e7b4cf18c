package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// secretFiles are the <NAME>_FILE twins of the secrets: each names a file
// holding the secret (a Docker or Kubernetes secret, a systemd credential),
// and holds the file's content once parsed. Setting a secret and its twin
// both is a configuration error.
type secretFiles struct {
	SlackBotToken      string `env:"SLACK_BOT_TOKEN_FILE,file,unset"`
	SlackAppToken      string `env:"SLACK_APP_TOKEN_FILE,file,unset"`
	SlackSigningSecret string `env:"SLACK_SIGNING_SECRET_FILE,file,unset"`
	MatrixAccessToken  string `env:"MATRIX_ACCESS_TOKEN_FILE,file,unset"`
	MatrixPassword     string `env:"MATRIX_PASSWORD_FILE,file,unset"`
}

// fileSuffix makes a secret's twin: SLACK_BOT_TOKEN_FILE.
const fileSuffix = "_FILE"

// secretVars maps the variable name of every secret and twin (env tags
// with the "unset" option, nested structs too) to its field in c.
func secretVars(c *config) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			if f.Type.Kind() == reflect.Struct && f.Tag.Get("env") == "" {
				walk(fv)
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("env"), ",")
			if slices.Contains(strings.Split(opts, ","), "unset") && fv.Kind() == reflect.String {
				out[name] = fv
			}
		}
	}
	walk(reflect.ValueOf(c).Elem())
	return out
}

// secretNames are the names of the secrets and their twins, sorted.
func secretNames() []string {
	var c config
	names := make([]string, 0, 16)
	for n := range secretVars(&c) {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// readSecretFiles fills each secret from its twin's file (m is the raw
// environment), trimming the line end editors and `echo` leave. It lists
// what is wrong: both set, an empty file, a secret without a twin.
func (c *config) readSecretFiles(m map[string]string) []string {
	vars := secretVars(c)
	var bad []string
	for _, name := range secretNames() {
		if strings.HasSuffix(name, fileSuffix) {
			continue
		}
		twin, ok := vars[name+fileSuffix]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s has no %s twin (a bug)", name, name+fileSuffix))
			continue
		}
		file := m[name+fileSuffix]
		switch {
		case file == "":
		case m[name] != "":
			bad = append(bad, fmt.Sprintf("%s and %s are both set: set one", name, name+fileSuffix))
		default:
			v := strings.TrimRight(twin.String(), "\r\n")
			if v == "" {
				bad = append(bad, fmt.Sprintf("%s: the file %s is empty", name+fileSuffix, file))
				continue
			}
			vars[name].SetString(v)
		}
		twin.SetString("") // the content lives in the secret's own field only
	}
	return bad
}

// secretsFDVar names the descriptor the re-executed bot reads its secrets
// from. The number is not secret; the descriptor is closed once read.
const secretsFDVar = "CLAUDEOPS_SECRETS_FD"

// takeSecrets returns the environment the bot reads its configuration
// from, and keeps the secrets out of the process's own environment.
//
// Why a re-exec: /proc/<pid>/environ shows the environment the process was
// started with, and unsetting a variable (os.Unsetenv) does not change it;
// any process of the same user, a session's claude and its tools included,
// can read it. So a process whose environment holds a secret or a twin
// re-executes itself (same binary, same arguments) with an environment
// stripped of all of them, handing the stripped variables over in a memfd
// whose number is in CLAUDEOPS_SECRETS_FD: never in environ or argv, and
// read and closed before anything else starts. Only when that fails does
// it return an error; it does not run with its secrets in view.
func takeSecrets() ([]string, error) {
	env := os.Environ()
	if fd, ok := os.LookupEnv(secretsFDVar); ok {
		return receiveSecrets(env, fd)
	}
	keep, secret := splitSecrets(env)
	if len(secret) == 0 {
		return env, nil
	}
	return nil, reexec(keep, secret)
}

// splitSecrets separates the secrets and their twins from env.
func splitSecrets(env []string) (keep, secret []string) {
	names := secretNames()
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := slices.BinarySearch(names, k); ok {
			secret = append(secret, kv)
		} else {
			keep = append(keep, kv)
		}
	}
	return keep, secret
}

// reexec runs this binary again with keep as its environment and secret
// in a memfd. It returns only on failure.
func reexec(keep, secret []string) error {
	fd, err := unix.MemfdCreate("claudeops-secrets", 0) // no MFD_CLOEXEC: the new image inherits it
	if err != nil {
		return fmt.Errorf("hand over the secrets: create a memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "claudeops-secrets")
	defer f.Close()
	if _, err := f.WriteString(strings.Join(secret, "\x00")); err != nil {
		return fmt.Errorf("hand over the secrets: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("hand over the secrets: %w", err)
	}
	// /proc/self/exe is this very binary even if its file was replaced or
	// removed since it started.
	exe := "/proc/self/exe"
	if runtime.GOOS != "linux" {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("find this binary to re-execute it: %w", err)
		}
	}
	env := append(keep, secretsFDVar+"="+strconv.Itoa(fd))
	err = syscall.Exec(exe, os.Args, env)
	return fmt.Errorf("re-execute %s without the secrets in the environment: %w", exe, err)
}

// receiveSecrets reads the secrets the first process handed over through
// the descriptor fd, closes it, and returns env with them in place of
// secretsFDVar. Only secret variables are taken.
func receiveSecrets(env []string, fd string) ([]string, error) {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil, fmt.Errorf("%s=%q is not a descriptor", secretsFDVar, fd)
	}
	f := os.NewFile(uintptr(n), "claudeops-secrets")
	b, err := io.ReadAll(f)
	f.Close()
	os.Unsetenv(secretsFDVar)
	if err != nil {
		return nil, fmt.Errorf("read the secrets from descriptor %d: %w", n, err)
	}
	out := slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, secretsFDVar+"=") })
	names := secretNames()
	for kv := range strings.SplitSeq(string(b), "\x00") {
		k, _, ok := strings.Cut(kv, "=")
		if _, known := slices.BinarySearch(names, k); !ok || !known {
			if kv != "" {
				return nil, errors.New("the secrets handed over hold a variable that is not a secret")
			}
			continue
		}
		out = append(out, kv)
	}
	return out, nil
}
