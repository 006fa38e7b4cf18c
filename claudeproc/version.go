package claudeproc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The CLI versions this package is built and tested against.
var (
	// MinVersion is the oldest CLI that passed the whole real-CLI suite
	// (scripts/test runs it with this version too). 2.1.308 and older do
	// not report a turn's own usage (model_usage_since_last_result), so a
	// turn's tokens and cost are not known apart from the session's; older
	// ones still start in their automatic permission mode when none is
	// given (2.1.285 … 2.1.301). docs/OPERATIONS.md, "The Claude Code CLI", has the table.
	MinVersion = Version{2, 1, 309}
	// TestedVersion is the newest CLI the test suite ran against: the
	// version the fixtures were captured from and the tests install.
	TestedVersion = Version{2, 1, 332}
)

// Version is a CLI version.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare returns -1, 0 or 1.
func (v Version) Compare(o Version) int {
	for _, d := range [3]int{v.Major - o.Major, v.Minor - o.Minor, v.Patch - o.Patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

var versionRE = regexp.MustCompile(`(?:^|\s|v)(\d+)\.(\d+)\.(\d+)`)

// ParseVersion reads the output of `claude --version`, e.g.
// "2.1.330 (Claude Code)" or the older "claude v1.0.22 (...)".
func ParseVersion(out string) (Version, error) {
	m := versionRE.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return Version{}, fmt.Errorf("no version number in %q", strings.TrimSpace(out))
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	return v, nil
}

// Compatibility is how well a CLI version fits this build: the levels of
// the seed's Version Compatibility Layer. /readyz and `claudeops version`
// show String().
type Compatibility int

const (
	CompatUnknown      Compatibility = iota // not checked (the zero value)
	CompatFull                              // MinVersion … TestedVersion: runs
	CompatLikely                            // newer than tested: runs, with a warning
	CompatDegraded                          // runs, but something is missing: its version could not be read
	CompatIncompatible                      // older than the minimum: refused (exit 78)
	CompatNotFound                          // no CLI at the configured path: refused (exit 72)
)

func (c Compatibility) String() string {
	switch c {
	case CompatFull:
		return "compatible"
	case CompatLikely:
		return "likely compatible"
	case CompatDegraded:
		return "degraded"
	case CompatIncompatible:
		return "incompatible"
	case CompatNotFound:
		return "not found"
	}
	return "unknown"
}

// VersionInfo is the result of CheckVersion.
type VersionInfo struct {
	Bin     string // resolved path
	Raw     string // what --version printed
	Version Version
	Level   Compatibility
	Message string // one line for logs and `claudeops version`
}

// ErrNotFound means the CLI binary could not be found or run.
var ErrNotFound = errors.New("claude CLI not found")

// ErrIncompatible means the CLI is older than MinVersion.
var ErrIncompatible = errors.New("claude CLI version not supported")

// CheckVersion runs `bin --version` and classifies the result. The error is
// ErrNotFound or ErrIncompatible (wrapped) when the bot must not start;
// a newer-than-tested CLI returns CompatLikely, one whose version cannot be
// read CompatDegraded, both with no error.
func CheckVersion(ctx context.Context, bin string) (VersionInfo, error) {
	if bin == "" {
		bin = "claude"
	}
	info := VersionInfo{Bin: bin}
	path, err := exec.LookPath(bin)
	if err != nil {
		info.Level = CompatNotFound
		info.Message = fmt.Sprintf("claude CLI %q not found: install @anthropic-ai/claude-code@%s or set CLAUDEOPS_CLAUDE_BIN", bin, TestedVersion)
		return info, fmt.Errorf("%w: %s: %v", ErrNotFound, bin, err)
	}
	info.Bin = path
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = BuildEnv(environ(), nil)
	out, err := cmd.Output()
	info.Raw = strings.TrimSpace(string(out))
	if err != nil {
		info.Level = CompatNotFound
		info.Message = fmt.Sprintf("claude CLI %s did not run: %v", path, err)
		return info, fmt.Errorf("%w: run %s --version: %v", ErrNotFound, path, err)
	}
	v, err := ParseVersion(info.Raw)
	if err != nil {
		info.Level = CompatDegraded
		info.Message = fmt.Sprintf("claude CLI %s: cannot read its version (%v); continuing degraded", path, err)
		return info, nil
	}
	info.Version = v
	info.Level = Classify(v)
	switch info.Level {
	case CompatIncompatible:
		info.Message = fmt.Sprintf("claude CLI %s is older than the minimum supported %s", v, MinVersion)
		return info, fmt.Errorf("%w: %s < %s", ErrIncompatible, v, MinVersion)
	case CompatLikely:
		info.Message = fmt.Sprintf("claude CLI %s is newer than the tested %s; it may have protocol changes", v, TestedVersion)
	default:
		info.Message = fmt.Sprintf("claude CLI %s (tested with %s)", v, TestedVersion)
	}
	return info, nil
}

// Classify places a version against MinVersion and TestedVersion.
func Classify(v Version) Compatibility {
	switch {
	case v.Compare(MinVersion) < 0:
		return CompatIncompatible
	case v.Compare(TestedVersion) > 0:
		return CompatLikely
	}
	return CompatFull
}
