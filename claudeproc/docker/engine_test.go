package docker

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// These tests run containers on a real Docker engine, from the image that
// scripts/docker-engine builds (a debootstrapped Debian plus the pinned
// CLI), and the real CLI in them against the fake Messages API on the
// host's loopback (so the containers use the host's network). scripts/test
// sets CLAUDEOPS_TEST_DOCKER_IMAGE and CLAUDEOPS_REQUIRE_DOCKER=1; where no
// engine can run at all it says why in CLAUDEOPS_DOCKER_UNAVAILABLE and the
// tests skip.
//
// The runner alone, with small commands, is tested in engine_runner_test.go
// and the real CLI in containers in engine_cli_test.go; this file holds the
// harness both share.

const eventTimeout = 90 * time.Second

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CLAUDEOPS_REQUIRE_DOCKER") == "1" {
		t.Fatal(why)
	}
	if r := os.Getenv("CLAUDEOPS_DOCKER_UNAVAILABLE"); r != "" {
		why += " (" + r + ")"
	}
	t.Skip("docker runner tests skipped: " + why)
}

// testRunner is a runner of its own instance (so that parallel runs and
// leftovers never mix), whose containers and volumes go with the test.
func testRunner(t *testing.T, mod func(*Config)) *Runner {
	t.Helper()
	image := os.Getenv("CLAUDEOPS_TEST_DOCKER_IMAGE")
	if image == "" {
		skipOrFail(t, "CLAUDEOPS_TEST_DOCKER_IMAGE is not set: scripts/test builds the image with scripts/docker-engine wherever a Docker engine can run")
	}
	cfg := Config{Image: image, Network: "host", Instance: "test-" + randomHex(4), Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Prepare(ctx); err != nil {
		r.Close()
		skipOrFail(t, err.Error())
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if left := r.containers(t, "", true); len(left) > 0 {
			t.Errorf("containers left behind: %v", left)
			for _, id := range left {
				_ = r.remove(ctx, id)
			}
		}
		vols, err := r.cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelInstance+"="+cfg.Instance)})
		if err == nil {
			for _, v := range vols.Items {
				if _, err := r.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err != nil {
					t.Errorf("remove volume %s: %v", v.Name, err)
				}
			}
		}
		r.Close()
	})
	return r
}

// containers lists the ids of this instance's containers (of one thread,
// when thread is set), running or not.
func (r *Runner) containers(t *testing.T, thread string, all bool) []string {
	t.Helper()
	f := make(client.Filters).Add("label", LabelInstance+"="+r.cfg.Instance)
	if thread != "" {
		f.Add("label", LabelThread+"="+Hash(thread))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := r.cli.ContainerList(ctx, client.ContainerListOptions{All: all, Filters: f})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	var ids []string
	for _, c := range res.Items {
		ids = append(ids, c.ID)
	}
	return ids
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
