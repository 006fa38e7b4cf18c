package docker

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/claudeproc"
)

// image is the image spec's session runs from: the one it names (a
// channel's, Spec.Image), checked as Prepare checks the runner's own —
// on the engine (never pulled) and its CLI recent enough — else the
// runner's. A fit image is remembered; an unfit one is checked again at
// the next start, so that an operator who builds it needs no restart.
func (r *Runner) image(ctx context.Context, spec claudeproc.Spec) (string, error) {
	img := spec.Image
	if img == "" || img == r.cfg.Image {
		return r.cfg.Image, nil
	}
	r.imgMu.Lock()
	ok := r.checked[img]
	r.imgMu.Unlock()
	if ok {
		return img, nil
	}
	if _, err := r.cli.ImageInspect(ctx, img); err != nil {
		return "", fmt.Errorf("find the channel's image %s on the Docker engine (it is never pulled; build or pull it first): %w", img, err)
	}
	if _, err := claudeproc.CheckImageVersion(ctx, imageCLI{r, img}, spec.Bin); err != nil {
		return "", fmt.Errorf("the channel's image %s: %w", img, err)
	}
	r.imgMu.Lock()
	if r.checked == nil {
		r.checked = map[string]bool{}
	}
	r.checked[img] = true
	r.imgMu.Unlock()
	return img, nil
}

// imageCLI is the CLI of one image, for claudeproc.CheckImageVersion.
type imageCLI struct {
	r     *Runner
	image string
}

func (c imageCLI) CLIVersion(ctx context.Context, bin string) (string, error) {
	return c.r.cliVersionIn(ctx, c.image, bin)
}
