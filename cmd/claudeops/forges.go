package main

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/claudeops/claudeops/forge"
)

// forgeBinding is one CLAUDEOPS_FORGES entry: the repositories whose clone
// URL starts with prefix are on the forge f.
type forgeBinding struct {
	prefix string
	f      forge.Forge
}

// forges finds a repository's forge (workspaces.Forges): the entry with
// the longest prefix of its clone URL.
type forges []forgeBinding

// ForgeOf implements workspaces.Forges.
func (fs forges) ForgeOf(repo string) (forge.Forge, forge.Repo, bool) {
	// A clone URL may carry git's credentials; the prefixes do not.
	if u, err := url.Parse(repo); err == nil && u.User != nil && u.Host != "" {
		u.User = nil
		repo = u.String()
	}
	for _, b := range fs { // longest prefix first (loadForges)
		if !strings.HasPrefix(repo, b.prefix) {
			continue
		}
		if r, ok := repoName(strings.TrimPrefix(repo, b.prefix)); ok {
			return b.f, r, true
		}
	}
	return nil, forge.Repo{}, false
}

// repoName is owner/name from what follows a forge's prefix in a clone URL
// ("acme/api.git", "/acme/api", ":acme/api.git").
func repoName(rest string) (forge.Repo, bool) {
	rest = strings.TrimSuffix(strings.TrimSuffix(strings.Trim(rest, "/:"), "/"), ".git")
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return forge.Repo{}, false
	}
	return forge.Repo{Owner: parts[len(parts)-2], Name: parts[len(parts)-1]}, true
}

// loadForges reads CLAUDEOPS_FORGES and the tokens' files, every problem
// listed at once. A problem line never shows a token: only the entry's
// prefix and kind, and the token file's path.
func (c *config) loadForges() []problem {
	var bad []problem
	for _, e := range c.Forges {
		b, err := c.forgeEntry(strings.TrimSpace(e))
		if err != nil {
			bad = append(bad, problem{want: "CLAUDEOPS_FORGES: " + err.Error()})
			continue
		}
		c.forges = append(c.forges, b)
	}
	sort.SliceStable(c.forges, func(i, j int) bool { return len(c.forges[i].prefix) > len(c.forges[j].prefix) })
	return bad
}

// forgeKinds makes each kind of forge a CLAUDEOPS_FORGES entry may name
// from its API base URL and token.
var forgeKinds = map[string]func(api string, tok forge.Token) (forge.Forge, error){
	"gitea": func(api string, tok forge.Token) (forge.Forge, error) {
		return nonNil(forge.NewGitea(forge.GiteaConfig{URL: api, Token: tok}))
	},
	"github": func(api string, tok forge.Token) (forge.Forge, error) {
		return nonNil(forge.NewGitHub(forge.GitHubConfig{URL: api, Token: tok}))
	},
}

// nonNil keeps a failed constructor's nil pointer out of the interface.
func nonNil[F forge.Forge](f F, err error) (forge.Forge, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// forgeEntry parses "<clone URL prefix>=<gitea|github>:<API base URL>[;token_file=<path>]".
func (c *config) forgeEntry(e string) (forgeBinding, error) {
	const form = "want <clone URL prefix>=<gitea|github>:<API base URL>[;token_file=<path>] (e.g. https://git.example.com/=gitea:https://git.example.com, https://github.com/=github:https://api.github.com)"
	prefix, spec, ok := strings.Cut(e, "=")
	kind, rest, ok2 := strings.Cut(spec, ":")
	if !ok || !ok2 || strings.TrimSpace(prefix) == "" {
		return forgeBinding{}, fmt.Errorf("%s, not %q", form, redactBinding(e))
	}
	prefix = strings.TrimSpace(prefix)
	api, opt, _ := strings.Cut(rest, ";")
	newForge, known := forgeKinds[kind]
	if !known {
		return forgeBinding{}, fmt.Errorf("%s: forge %q is not supported (gitea, github)", prefix, kind)
	}
	if u, err := url.Parse(api); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return forgeBinding{}, fmt.Errorf("%s: the API base URL must be an http(s) URL without credentials, %s", prefix, form)
	}
	tokenFile := c.ForgeTokenFile
	if opt != "" {
		k, v, _ := strings.Cut(opt, "=")
		if k != "token_file" || v == "" {
			return forgeBinding{}, fmt.Errorf("%s: unknown option %q, %s", prefix, k, form)
		}
		tokenFile = v
	}
	if tokenFile == "" {
		return forgeBinding{}, fmt.Errorf("%s: no token: set CLAUDEOPS_FORGE_TOKEN_FILE or the entry's token_file", prefix)
	}
	tok, err := forge.ReadToken(tokenFile)
	if err != nil {
		return forgeBinding{}, fmt.Errorf("%s: %w", prefix, err)
	}
	g, err := newForge(api, tok)
	if err != nil {
		return forgeBinding{}, fmt.Errorf("%s: %w", prefix, err)
	}
	return forgeBinding{prefix: prefix, f: g}, nil
}
