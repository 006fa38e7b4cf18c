package docker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc"
)

// markerLabel marks the channel's image: a container made from it carries
// the image's labels.
const markerLabel = "claudeops.test.marker"

// channelImage makes a second tag of the test image, marked, for the
// test's life: a channel's image.
func channelImage(t *testing.T, r *Runner) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := r.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: r.cfg.Image, Entrypoint: []string{"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.remove(context.WithoutCancel(ctx), c.ID)
	tag := "claudeops-test-channel:" + randomHex(4)
	if _, err := r.cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{Reference: tag, Changes: []string{"LABEL " + markerLabel + "=channel"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := r.cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{}); err != nil {
			t.Errorf("remove image %s: %v", tag, err)
		}
	})
	return tag
}

// TestChannelImage: a session whose spec names an image (its channel's
// setting) runs in a container of that image, another channel's session
// in the runner's own; an image not on the engine refuses the start and
// is never pulled. The oracle is the engine's inspection of each
// container.
func TestChannelImage(t *testing.T) {
	r := testRunner(t, nil)
	tag := channelImage(t, r)
	for _, tt := range []struct {
		channel, image, want, marker string
	}{
		{channel: "test/A", image: tag, want: tag, marker: "channel"},
		{channel: "test/B", want: r.cfg.Image},
	} {
		t.Run(tt.channel, func(t *testing.T) {
			sess := claudeproc.Session{Channel: tt.channel, Thread: tt.channel + "/1"}
			c, err := startRawImage(t, r, tt.image, sess)
			if err != nil {
				t.Fatal(err)
			}
			ids := r.containers(t, sess.Thread, true)
			if len(ids) != 1 {
				t.Fatalf("containers of the session: %v", ids)
			}
			in, err := r.cli.ContainerInspect(context.Background(), ids[0], client.ContainerInspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := in.Container.Config.Image; got != tt.want {
				t.Errorf("the session's container is of %s, want %s", got, tt.want)
			}
			if got := in.Container.Config.Labels[markerLabel]; got != tt.marker {
				t.Errorf("the container's marker %q, want %q", got, tt.marker)
			}
			c.stdin.Close()
			if _, err := c.h.Wait(); err != nil {
				t.Error(err)
			}
			if out := recv(t, c.stdout, "stdout"); !strings.HasSuffix(strings.TrimSpace(out), "(Claude Code)") {
				t.Errorf("stdout %q: want the image's CLI's version", out)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		missing := "claudeops-test-missing:" + randomHex(4)
		_, err := startRawImage(t, r, missing, claudeproc.Session{Channel: "test/C", Thread: "test/C/1"})
		if err == nil || !strings.Contains(err.Error(), "never pulled") {
			t.Errorf("start from a missing image: %v", err)
		}
		if _, err := r.cli.ImageInspect(context.Background(), missing); err == nil {
			t.Error("the missing image was pulled")
		}
	})
}

// startRawImage starts `claude --version` in a session of image.
func startRawImage(t *testing.T, r *Runner, image string, sess claudeproc.Session) (*raw, error) {
	t.Helper()
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	h, err := r.Start(context.Background(), claudeproc.Spec{
		Bin: "claude", Args: []string{"--version"}, Dir: t.TempDir(), Session: sess, Image: image,
		Stdin: inR, Stdout: outW, Stderr: errW,
	})
	if err != nil {
		inW.Close()
		return nil, err
	}
	return &raw{h: h, stdin: inW, stdout: readAll(outR), stderr: readAll(errR)}, nil
}
