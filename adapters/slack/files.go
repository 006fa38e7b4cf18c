package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
)

// slackFileOrigin is where Slack serves url_private and
// url_private_download: the only place the bot token goes for a file.
const slackFileOrigin = "https://files.slack.com"

// maxFileRedirects bounds the redirects of one download (each one must stay
// on FileOrigins).
const maxFileRedirects = 3

// parseOrigins reads FileOrigins: each a bare scheme://host[:port].
func parseOrigins(list []string) (map[string]bool, error) {
	out := make(map[string]bool, len(list))
	for _, s := range list {
		u, err := url.Parse(strings.TrimSuffix(s, "/"))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
			u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("slack: file origin %q is not scheme://host[:port]", s)
		}
		out[origin(u)] = true
	}
	return out, nil
}

// origin is u's scheme://host[:port], lower case; "" for a URL with user
// info (it would be sent along).
func origin(u *url.URL) string {
	if u.User != nil {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// fileClient is base (its transport and timeout) following redirects only
// within origins: Go keeps an Authorization header set on the request
// across same-domain redirects, so a redirect elsewhere is not followed at all.
func fileClient(base *http.Client, origins map[string]bool) *http.Client {
	c := *base
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxFileRedirects {
			return errors.New("too many redirects")
		}
		if !origins[origin(req.URL)] {
			return fmt.Errorf("redirected off Slack's file host, to %s", req.URL.Host)
		}
		return nil
	}
	return &c
}

// attachments describes a message's files; nothing is fetched until the
// bot calls a file's Open.
func (a *Adapter) attachments(files []slack.File) []adapters.File {
	var out []adapters.File
	for _, f := range files {
		link := f.URLPrivateDownload
		if link == "" {
			link = f.URLPrivate
		}
		out = append(out, adapters.File{
			Name: f.Name, MimeType: f.Mimetype, Size: int64(f.Size),
			Open: func(ctx context.Context) (io.ReadCloser, error) { return a.openFile(ctx, link, f.Mimetype) },
		})
	}
	return out
}

// openFile starts the download of a url_private with the bot token, which
// is sent only to FileOrigins. mimeType is the file's declared type.
func (a *Adapter) openFile(ctx context.Context, link, mimeType string) (io.ReadCloser, error) {
	if link == "" {
		return nil, errors.New("no download link from Slack (an external or hidden file?)")
	}
	u, err := url.Parse(link)
	if err != nil || !a.origins[origin(u)] {
		a.log.Warn("slack: file link refused: not on Slack's file host; the token is not sent", "link", link)
		return nil, errors.New("its link is not on Slack's file host")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.BotToken)
	resp, err := a.fileHC.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("the file host answered %s", resp.Status)
	}
	// Without the files:read scope Slack answers 200 with its sign-in page:
	// that page is not the file.
	if isHTML(resp.Header.Get("Content-Type")) && !isHTML(mimeType) {
		resp.Body.Close()
		a.log.Warn("slack: the file host answered with a web page, not the file; does the app have the files:read scope?")
		return nil, errors.New("Slack sent a web page instead of the file (the app may lack the files:read scope)")
	}
	return resp.Body, nil
}

// isHTML reports whether a media type is HTML.
func isHTML(mediaType string) bool {
	t, _, _ := strings.Cut(mediaType, ";")
	return strings.EqualFold(strings.TrimSpace(t), "text/html")
}
