package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testcli"
)

// The image test's harness: the docker CLI, and the Dockerfile built as
// an operator builds it, on the base images scripts/docker-engine makes
// from Debian packages (no registry is reachable here).

// imageCacheRepo tags the stages that do not follow the source (the CLI,
// the modules, the runtime with its packages): kept between runs, as the
// base images are, so that a run rebuilds only the bot. A new tag's
// predecessor is removed.
const imageCacheRepo = "claudeops-image-test-cache"

// cachedStages are the Dockerfile's stages kept as cache, tagged (an
// untagged one goes with the image built on it), in its order: those
// before the source, and depsbuilt, which follows only the list of
// packages the bot imports.
var cachedStages = []string{"cli", "deps", "runtime", "depsbuilt"}

// imageBases are the base images for the Dockerfile's BUILD_IMAGE and
// RUNTIME_IMAGE, from scripts/test; the test skips, saying why, only where
// no engine can run (or fails, when CLAUDEOPS_REQUIRE_DOCKER=1).
func imageBases(t *testing.T) (build, runtime string) {
	t.Helper()
	build, runtime = os.Getenv("CLAUDEOPS_TEST_BUILD_IMAGE"), os.Getenv("CLAUDEOPS_TEST_RUNTIME_IMAGE")
	if build != "" && runtime != "" {
		return build, runtime
	}
	why := "CLAUDEOPS_TEST_BUILD_IMAGE and CLAUDEOPS_TEST_RUNTIME_IMAGE are not set: " +
		"scripts/test builds the base images with scripts/docker-engine wherever a Docker engine can run"
	if os.Getenv("CLAUDEOPS_REQUIRE_DOCKER") == "1" {
		t.Fatal(why)
	}
	if r := os.Getenv("CLAUDEOPS_DOCKER_UNAVAILABLE"); r != "" {
		why += " (" + r + ")"
	}
	t.Skip("image test skipped: " + why)
	return "", ""
}

// dockerCLI runs the docker CLI and returns its stdout, trimmed.
func dockerCLI(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// mustDocker is dockerCLI, fatal on failure.
func mustDocker(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := dockerCLI(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cleanupDocker removes, at the test's end, what docker rm/rmi/volume rm
// args name; "no such" is not an error (it may never have been made).
func cleanupDocker(t *testing.T, args ...string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := dockerCLI(ctx, args...); err != nil && !strings.Contains(strings.ToLower(err.Error()), "no such") {
			t.Errorf("clean up: %v", err)
		}
	})
}

func randomName(t *testing.T, prefix string) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// buildImage builds the repository's Dockerfile as the image under test,
// removed at the test's end with the build stage that made its binary;
// the cached stages stay (imageCacheRepo). The legacy builder (no buildx
// here) with the host's network reaches the Go module proxy, the npm
// registry and Debian's mirror as the host does.
func buildImage(t *testing.T, buildBase, runtimeBase string) string {
	t.Helper()
	goproxy, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env GOPROXY: %v", err)
	}
	args := []string{"build", "--network", "host", "--force-rm",
		"--build-arg", "BUILD_IMAGE=" + buildBase, "--build-arg", "RUNTIME_IMAGE=" + runtimeBase,
		"--build-arg", "GOPROXY=" + strings.TrimSpace(string(goproxy))}
	src := sourceSnapshot(t, testcli.RepoRoot())
	for _, stage := range cachedStages {
		tag := imageCacheRepo + ":" + stage
		old, _ := dockerCLI(context.Background(), "image", "inspect", "--format", "{{.Id}}", tag)
		built := dockerBuild(t, src, slices.Concat(args, []string{"--target", stage, "--tag", tag})...)
		now := mustDocker(t, "image", "inspect", "--format", "{{.Id}}", tag)
		for _, id := range []string{old, built} {
			if id != "" && id != now {
				// Untagged: superseded, or outrun by another run's
				// build. Docker refuses while a build still uses it;
				// it is only cache.
				_, _ = dockerCLI(context.Background(), "rmi", id)
			}
		}
	}
	image := randomName(t, "claudeops-image-test:")
	// Removed last first: the image, then the build stage under it. Both
	// builds are of one snapshot of the source (others may be editing the
	// tree), so the second finds the first's build stage in its cache.
	cleanupDocker(t, "rmi", image+"-build")
	dockerBuild(t, src, slices.Concat(args, []string{"--target", "build", "--tag", image + "-build"})...)
	cleanupDocker(t, "rmi", image)
	dockerBuild(t, src, slices.Concat(args, []string{"--tag", image})...)
	return image
}

// sourceSnapshot copies the repository (but .git and .cache, which
// .dockerignore leaves out anyway) into a directory of the test's, for a
// build context that does not change from one build to the next.
func sourceSnapshot(t *testing.T, root string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		to := filepath.Join(dst, rel)
		switch {
		case rel == ".":
			return nil
		case d.IsDir() && (rel == ".git" || rel == ".cache"):
			return filepath.SkipDir
		case d.IsDir():
			return os.Mkdir(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil // sockets, pipes: not source
	})
	if err != nil {
		t.Fatalf("snapshot of the source: %v", err)
	}
	return dst
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// dockerBuild runs docker build in dir and returns the image's id; its
// output goes to a file, the end of which is shown when the build fails.
func dockerBuild(t *testing.T, dir string, args ...string) string {
	t.Helper()
	tmp := t.TempDir()
	log, iid := filepath.Join(tmp, "build.log"), filepath.Join(tmp, "iid")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", slices.Concat(args, []string{"--iidfile", iid, "."})...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	cmd.Stdout, cmd.Stderr = f, f
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(log)
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		t.Fatalf("docker %s: %v; the build's last lines:\n%s", strings.Join(args, " "), err,
			strings.Join(lines[max(0, len(lines)-60):], "\n"))
	}
	t.Logf("docker %s: %s", strings.Join(args[len(args)-2:], " "), time.Since(start).Round(time.Second))
	id, err := os.ReadFile(iid)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(id))
}
