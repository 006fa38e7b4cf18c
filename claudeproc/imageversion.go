package claudeproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// ImageCLI is a runner whose CLI is an image's (docker, kubernetes):
// CLIVersion runs `bin --version` there and returns what it printed.
type ImageCLI interface {
	CLIVersion(ctx context.Context, bin string) (string, error)
}

// CheckImageVersion is CheckVersion for the CLI in r's image: the same
// levels, messages and errors.
func CheckImageVersion(ctx context.Context, r ImageCLI, bin string) (VersionInfo, error) {
	info := VersionInfo{Bin: bin + " (in the runner's image)"}
	raw, err := r.CLIVersion(ctx, bin)
	if err != nil {
		info.Level = CompatNotFound
		info.Message = fmt.Sprintf("claude CLI %s did not run: %v", info.Bin, err)
		return info, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	info.Raw = raw
	v, err := ParseVersion(raw)
	if err != nil {
		info.Level = CompatDegraded
		info.Message = fmt.Sprintf("claude CLI %s: cannot read its version (%v); continuing degraded", info.Bin, err)
		return info, nil
	}
	info.Version, info.Level = v, Classify(v)
	if v.Compare(MinVersion) < 0 {
		info.Message = fmt.Sprintf("claude CLI %s %s is older than the minimum supported %s", info.Bin, v, MinVersion)
		return info, fmt.Errorf("%w: %s < %s", ErrIncompatible, v, MinVersion)
	}
	info.Message = fmt.Sprintf("claude CLI %s %s (tested with %s)", info.Bin, v, TestedVersion)
	return info, nil
}

// StartImageCLI is the start's policy for the image's CLI: missing or too
// old stops the bot (the error), newer than tested or of an unreadable
// version is logged as a warning. It returns the check, for readiness to
// start from.
func StartImageCLI(ctx context.Context, r ImageCLI, bin string, log *slog.Logger) (VersionInfo, error) {
	info, err := CheckImageVersion(ctx, r, bin)
	switch {
	case errors.Is(err, ErrNotFound):
		return info, fmt.Errorf("%s (CLAUDEOPS_CLAUDE_BIN names the CLI in the image)", info.Message)
	case err != nil:
		return info, fmt.Errorf("claude CLI %s in the image is older than the minimum supported %s", info.Version, MinVersion)
	case info.Level == CompatDegraded:
		log.Warn("claude CLI in the image: cannot read its version; continuing degraded", "printed", info.Raw)
	case info.Level == CompatLikely:
		log.Warn("claude CLI in the image is newer than the tested one; it may have protocol changes", "version", info.Version.String(), "tested", TestedVersion.String())
	default:
		log.Info("claude CLI in the image", "version", info.Version.String(), "tested", TestedVersion.String())
	}
	return info, nil
}
