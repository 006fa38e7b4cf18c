package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthTimeout bounds `claudeops healthcheck` as a whole: well inside the
// image's HEALTHCHECK --timeout, so the command reports its own failure.
const healthTimeout = 5 * time.Second

// healthcheck is `claudeops healthcheck`, the image's HEALTHCHECK (a slim
// image has no curl): it GETs /healthz of the bot's HTTP server at
// CLAUDEOPS_HTTP_ADDR, and returns 0 when that answers 200 within
// timeout, 1 otherwise, no address set included (Docker reads 1 as
// unhealthy; 2 is reserved). It reads that one variable and nothing else
// of the configuration: whatever else is wrong is the bot's to report.
func healthcheck(ctx context.Context, environ []string, timeout time.Duration, stdout, stderr io.Writer) int {
	url, err := healthURL(envMap(environ)["CLAUDEOPS_HTTP_ADDR"])
	if err != nil {
		fmt.Fprintf(stderr, "claudeops healthcheck: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	status, err := getStatus(ctx, url)
	if err != nil {
		fmt.Fprintf(stderr, "claudeops healthcheck: GET %s: %v\n", url, err)
		return 1
	}
	if status != http.StatusOK {
		fmt.Fprintf(stderr, "claudeops healthcheck: GET %s: %d %s\n", url, status, http.StatusText(status))
		return 1
	}
	fmt.Fprintf(stdout, "GET %s: 200 OK\n", url)
	return 0
}

// healthURL is /healthz at addr (host:port, as CLAUDEOPS_HTTP_ADDR). A
// listener on all addresses (an empty or unspecified host) is asked on
// 127.0.0.1: the check runs beside the bot, in its container.
func healthURL(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("CLAUDEOPS_HTTP_ADDR is not set: the bot serves no /healthz to check")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("CLAUDEOPS_HTTP_ADDR %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// getStatus GETs url and returns the status code. Never through a proxy
// from the environment (the bot is local), never following a redirect.
func getStatus(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	c := &http.Client{
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
