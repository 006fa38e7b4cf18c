package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/claudeops/claudeops/claudeproc"
)

// probeOutput caps what a version probe keeps of the CLI's output.
const probeOutput = 4096

// CLIVersion runs `bin --version` in a Pod made as a session's are (the
// image, the user, the work claim mounted read-only, the Secret), and
// returns what it printed: the image, the claim and the Secret are checked
// with it.
func (r *Runner) CLIVersion(ctx context.Context, bin string) (string, error) {
	// The claim's homes are the bot's to make: a subPath the kubelet
	// makes is root's.
	if err := r.ensureHome(r.cfg.Homes()); err != nil {
		return "", err
	}
	files, err := pipes()
	if err != nil {
		return "", err
	}
	inR, inW, outR, outW, errR, errW := files[0], files[1], files[2], files[3], files[4], files[5]
	spec := claudeproc.Spec{
		Bin: bin, Args: []string{"--version"},
		Session: claudeproc.Session{Channel: "probe", Thread: "probe"},
		Stdin:   inR, Stdout: outW, Stderr: errW,
	}
	var out, errOut bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&out, io.LimitReader(outR, probeOutput))
		_, _ = io.Copy(io.Discard, outR)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&errOut, io.LimitReader(errR, probeOutput))
		_, _ = io.Copy(io.Discard, errR)
	}()
	defer func() {
		inW.Close()
		wg.Wait()
		outR.Close()
		errR.Close()
	}()
	first, _ := claudeproc.LauncherLine(spec) // "go": no configuration to read
	h, err := r.run(ctx, spec, mounts{home: HomesDir, readOnly: true, probe: true}, first)
	if err != nil {
		return "", fmt.Errorf("run %s --version in a Pod of %s: %w", bin, r.cfg.Image, err)
	}
	inW.Close() // the CLI needs no input
	st, err := h.Wait()
	wg.Wait()
	if err != nil {
		return "", fmt.Errorf("run %s --version in a Pod of %s: %w", bin, r.cfg.Image, err)
	}
	if st.Code != 0 || st.Reason != "" {
		why := st.Reason
		if why == "" {
			why = fmt.Sprintf("exit code %d", st.Code)
		}
		return "", fmt.Errorf("%s --version in a Pod of %s: %s: %s", bin, r.cfg.Image, why, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// pipes makes three pipes: stdin's read and write ends, then stdout's,
// then stderr's.
func pipes() ([]*os.File, error) {
	var fs []*os.File
	for range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(fs...)
			return nil, fmt.Errorf("make a pipe: %w", err)
		}
		fs = append(fs, r, w)
	}
	return fs, nil
}
