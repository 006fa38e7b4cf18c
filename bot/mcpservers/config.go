package mcpservers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Config is the extension's settings, with their env tags.
type Config struct {
	// ServersFile is the operator's MCP servers file; "" is none.
	ServersFile string `env:"CLAUDEOPS_MCP_SERVERS_FILE"`
	// PluginDirs are local plugin directories every channel gets (the
	// servers file's plugins section gives one to some channels).
	PluginDirs []string `env:"CLAUDEOPS_PLUGIN_DIRS"`
	// Reserved are server names taken by the bot's own (set by cmd).
	Reserved []string `env:"-"`
}

// Server is one server of the file: its configuration for the CLI (with
// each secret still a file to read) and the channels that get it.
type Server struct {
	Name     string
	Channels []string
	// spec is the server's object as written, less "channels".
	spec map[string]json.RawMessage
	// secrets are the files named in env or headers: key → path, by field.
	secrets map[string]map[string]string
}

// Catalog is the checked file and plugin directories.
type Catalog struct {
	Servers []Server
	Plugins []Plugin
	// file is the servers file; "" when none.
	file string
}

// Files are the files that hold secrets: the servers file and every
// secret file it names. No session may read them (cmd hides them).
func (c *Catalog) Files() []string {
	if c == nil || c.file == "" {
		return nil
	}
	out := []string{c.file}
	for _, s := range c.Servers {
		for _, files := range s.secrets {
			for _, f := range files {
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// Programs are what sessions run for the operator: each stdio server's
// command given as a path, and the plugin directories. A session must
// not be able to change them (cmd keeps them out of its directories).
func (c *Catalog) Programs() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, s := range c.Servers {
		var cmd string
		if json.Unmarshal(s.spec["command"], &cmd) == nil && strings.Contains(cmd, "/") {
			out = append(out, cmd)
		}
	}
	for _, p := range c.Plugins {
		out = append(out, p.Dir)
	}
	return out
}

// URLs are the http servers' URLs, by server name.
func (c *Catalog) URLs() map[string]string {
	out := map[string]string{}
	if c == nil {
		return out
	}
	for _, s := range c.Servers {
		var u string
		if json.Unmarshal(s.spec["url"], &u) == nil && u != "" {
			out[s.Name] = u
		}
	}
	return out
}

// nameRE: the CLI names a server's tools mcp__<name>__<tool>. Compiled at first
// use: a deployment without MCP servers never pays for it.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// keys are the fields a server may have, by transport.
var keys = map[string][]string{
	"stdio": {"type", "command", "args", "env", "channels"},
	"http":  {"type", "url", "headers", "channels"},
}

// Load reads and checks c's file and plugin directories. The error lists
// every problem, one a line; the secrets' files are read (so checked)
// but their content is not kept.
func Load(c Config) (*Catalog, error) {
	cat := &Catalog{file: c.ServersFile}
	plugins, bad := envPlugins(c.PluginDirs)
	cat.Plugins = plugins
	if c.ServersFile != "" {
		servers, more, problems := loadFile(c.ServersFile, c.Reserved, plugins)
		cat.Servers = servers
		cat.Plugins = append(cat.Plugins, more...)
		for _, p := range problems {
			bad = append(bad, "CLAUDEOPS_MCP_SERVERS_FILE="+c.ServersFile+": "+p)
		}
	}
	if len(bad) > 0 {
		return cat, errors.New(strings.Join(bad, "\n"))
	}
	return cat, nil
}

// loadFile reads the servers file: its servers and its plugins (beside
// those already taken), and every problem of either.
func loadFile(path string, reserved []string, taken []Plugin) ([]Server, []Plugin, []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, []string{err.Error()}
	}
	var file struct {
		MCPServers map[string]map[string]json.RawMessage `json:"mcpServers"`
		Plugins    []json.RawMessage                     `json:"plugins"`
	}
	if err := strictJSON(data, &file); err != nil {
		return nil, nil, []string{"want {\"mcpServers\": {\"<name>\": {…}}, \"plugins\": [{\"dir\": …, \"channels\": […]}]}: " + err.Error()}
	}
	names := make([]string, 0, len(file.MCPServers))
	for n := range file.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Server
	var bad []string
	for _, n := range names {
		s, problems := checkServer(n, file.MCPServers[n], reserved)
		for _, p := range problems {
			bad = append(bad, fmt.Sprintf("server %q: %s", n, p))
		}
		if len(problems) == 0 {
			out = append(out, s)
		}
	}
	plugins, problems := filePlugins(file.Plugins, taken)
	return out, plugins, append(bad, problems...)
}

// checkServer checks one server's fields, all of them.
func checkServer(name string, fields map[string]json.RawMessage, reserved []string) (Server, []string) {
	var bad []string
	if !nameRE().MatchString(name) {
		bad = append(bad, "a name is letters, digits, _ and - (at most 64)")
	}
	if slices.Contains(reserved, name) {
		bad = append(bad, "the name is the bot's own server's")
	}
	s := Server{Name: name, spec: map[string]json.RawMessage{}, secrets: map[string]map[string]string{}}
	typ := "stdio"
	if raw, ok := fields["type"]; ok && json.Unmarshal(raw, &typ) != nil {
		bad = append(bad, "type: want a string")
	}
	allowed, ok := keys[typ]
	if !ok {
		return s, append(bad, fmt.Sprintf("type %q: want stdio or http", typ))
	}
	for k, v := range fields {
		switch {
		case !slices.Contains(allowed, k):
			bad = append(bad, fmt.Sprintf("%s: not a field of a %s server (%s)", k, typ, strings.Join(allowed, ", ")))
		case k == "channels":
			if json.Unmarshal(v, &s.Channels) != nil || len(s.Channels) == 0 || slices.Contains(s.Channels, "") {
				bad = append(bad, `channels: want a list of channel or room ids, or ["*"] for all`)
			}
		case k == "env" || k == "headers":
			bad = append(bad, s.checkValues(k, v)...)
		default:
			s.spec[k] = v
		}
	}
	bad = append(bad, checkTransport(typ, fields)...)
	sort.Strings(bad)
	return s, bad
}

// checkTransport: a stdio server names a program, an http one a URL.
func checkTransport(typ string, fields map[string]json.RawMessage) []string {
	var bad []string
	if typ == "stdio" {
		var cmd string
		if json.Unmarshal(fields["command"], &cmd) != nil || cmd == "" {
			bad = append(bad, "command: want the program to run")
		}
		var args []string
		if raw, ok := fields["args"]; ok && json.Unmarshal(raw, &args) != nil {
			bad = append(bad, "args: want a list of strings")
		}
		return bad
	}
	var u string
	if json.Unmarshal(fields["url"], &u) != nil {
		return []string{"url: want the server's http or https URL"}
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		bad = append(bad, "url: want the server's http or https URL")
	}
	return bad
}

// checkValues checks env or headers: each value a string, or
// {"file": "/abs/path"} naming a readable file.
func (s *Server) checkValues(field string, raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return []string{field + `: want an object of names to strings or {"file": "/abs/path"}`}
	}
	plain := map[string]string{}
	files := map[string]string{}
	var bad []string
	for k, v := range m {
		var str string
		if json.Unmarshal(v, &str) == nil {
			plain[k] = str
			continue
		}
		var ref struct {
			File string `json:"file"`
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if dec.Decode(&ref) != nil || !filepath.IsAbs(ref.File) {
			bad = append(bad, fmt.Sprintf(`%s.%s: want a string or {"file": "/abs/path"}`, field, k))
			continue
		}
		if _, err := readSecret(ref.File); err != nil {
			bad = append(bad, fmt.Sprintf("%s.%s: %v", field, k, err))
			continue
		}
		files[k] = ref.File
	}
	b, _ := json.Marshal(plain) // strings only: cannot fail
	s.spec[field] = b
	s.secrets[field] = files
	return bad
}

// readSecret is a secret file's content without its trailing newlines.
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the secret: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// For reports whether the server is given to the channel: its platform
// id (ref.Channel) or its key ("platform/channel") is listed, or "*".
func (s Server) For(channel, key string) bool {
	return slices.Contains(s.Channels, "*") || slices.Contains(s.Channels, channel) || slices.Contains(s.Channels, key)
}

// Resolve is the server's configuration for the CLI, its secrets read
// now from their files.
func (s Server) Resolve() (json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(s.spec))
	for k, v := range s.spec {
		out[k] = v
	}
	for field, files := range s.secrets {
		vals := map[string]string{}
		if err := json.Unmarshal(s.spec[field], &vals); err != nil {
			return nil, fmt.Errorf("server %s: %s: %w", s.Name, field, err)
		}
		for k, path := range files {
			v, err := readSecret(path)
			if err != nil {
				return nil, fmt.Errorf("server %s: %s.%s: %w", s.Name, field, k, err)
			}
			vals[k] = v
		}
		b, _ := json.Marshal(vals) // strings only: cannot fail
		out[field] = b
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", s.Name, err)
	}
	return b, nil
}
