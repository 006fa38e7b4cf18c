package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The repository's subagents (.claude/agents/*.md) reach a guarded session
// through --agents, which the bot builds from them: --restricted, which
// keeps the repository's settings unread, loads no agent file (nor does
// --add-dir), and --agents gives the model the same listing, under the
// same names, as on a laptop. Only what describes an agent passes; the
// keys that would let a file run something or decide something
// (permissionMode, hooks, mcpServers, skills, memory, isolation, …) are
// left out.

const (
	agentsDir = ".claude/agents"
	// maxAgentFile and maxAgentsJSON keep the argument under Linux's 128
	// KiB cap for one argument (MAX_ARG_STRLEN); maxAgents bounds the work.
	maxAgentFile  = 32 << 10
	maxAgentsJSON = 96 << 10
	maxAgents     = 64
	// maxAgentEntries bounds the walk of a tree of directories.
	maxAgentEntries = 1024
)

// repoAgent is what --agents takes of one agent.
type repoAgent struct {
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	Tools           []string `json:"tools,omitempty"`
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	Model           string   `json:"model,omitempty"`
}

// loadAgents reads a guarded session's agents from its working directory
// and from the operator's plugins (operatorplugins.go), each of those
// named <plugin>:<agent> as the CLI names a plugin's.
func (o *Options) loadAgents(log *slog.Logger) {
	if o.Guard == nil {
		return
	}
	all := map[string]repoAgent{}
	if o.Dir != "" {
		agents, skipped, err := readAgents(o.Dir, agentsDir, "")
		if err != nil || len(skipped) > 0 {
			log.Warn("repository agents left out", "dir", o.Dir, "skipped", skipped, "err", err)
		}
		maps.Copy(all, agents)
	}
	maps.Copy(all, o.pluginAgents(log))
	b, skipped, err := encodeAgents(all)
	if err != nil || len(skipped) > 0 {
		log.Warn("agents left out", "skipped", skipped, "err", err)
	}
	o.agents = b
}

// RepoAgents reads the agent files of the repository at dir (under
// .claude/agents, its subdirectories included) and returns
// them as --agents JSON, "" when there are none; err only when dir
// cannot be opened. Files are read through
// os.Root: a symlink leading out of dir is not followed. A file that is
// not an agent (no name or description, bad front matter, too big) is
// skipped, as the CLI skips it; skipped names the files left out and why.
func RepoAgents(dir string) (agents string, skipped []string, err error) {
	all, skipped, err := readAgents(dir, agentsDir, "")
	if err != nil {
		return "", skipped, err
	}
	b, more, err := encodeAgents(all)
	return b, append(skipped, more...), err
}

// encodeAgents is agents as --agents JSON, "" when none or over the bound.
func encodeAgents(all map[string]repoAgent) (string, []string, error) {
	if len(all) == 0 {
		return "", nil, nil
	}
	b, err := json.Marshal(all)
	if err != nil {
		return "", nil, fmt.Errorf("encode agents: %w", err)
	}
	if len(b) > maxAgentsJSON {
		return "", []string{fmt.Sprintf("all: %d bytes, over %d", len(b), maxAgentsJSON)}, nil
	}
	return string(b), nil, nil
}

// readAgents reads the agent files below sub of dir, each named prefix
// and its name.
func readAgents(dir, sub, prefix string) (map[string]repoAgent, []string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s for its agents: %w", dir, err)
	}
	defer root.Close()
	all := map[string]repoAgent{}
	var skipped []string
	seen := 0
	// Subdirectories too, as the CLI reads them; WalkDir enters no
	// symlinked directory.
	err = fs.WalkDir(root.FS(), sub, func(name string, d fs.DirEntry, err error) error {
		seen++
		switch {
		case errors.Is(err, fs.ErrNotExist) && name == sub:
			return fs.SkipAll
		case err != nil: // a symlink out of dir, say
			skipped = append(skipped, name+": "+err.Error())
			return nil
		case len(all) >= maxAgents || seen > maxAgentEntries:
			return fs.SkipAll
		case d.IsDir() || !strings.HasSuffix(name, ".md"):
			return nil
		}
		id, a, why := readAgent(root, name)
		if why != "" {
			skipped = append(skipped, strings.TrimPrefix(name, sub+"/")+": "+why)
			return nil
		}
		all[prefix+id] = a
		return nil
	})
	if err != nil {
		return nil, skipped, fmt.Errorf("walk %s: %w", sub, err)
	}
	sort.Strings(skipped)
	return all, skipped, nil
}

// readAgent reads one agent file: its name, what passes of it, or why it
// is skipped.
func readAgent(root *os.Root, name string) (string, repoAgent, string) {
	body, err := readRepoFile(root, name, maxAgentFile)
	if err != nil {
		return "", repoAgent{}, err.Error()
	}
	front, prompt, ok := splitFrontMatter(body)
	if !ok {
		return "", repoAgent{}, "no front matter"
	}
	var fm struct {
		Name            string `yaml:"name"`
		Description     string `yaml:"description"`
		Tools           any    `yaml:"tools"`
		DisallowedTools any    `yaml:"disallowedTools"`
		Model           string `yaml:"model"`
	}
	if err := yaml.Unmarshal(front, &fm); err != nil {
		return "", repoAgent{}, "bad front matter"
	}
	if fm.Name == "" || fm.Description == "" {
		return "", repoAgent{}, "no name or description"
	}
	return fm.Name, repoAgent{Description: fm.Description, Prompt: strings.TrimSpace(string(prompt)),
		Tools: toolList(fm.Tools), DisallowedTools: toolList(fm.DisallowedTools), Model: fm.Model}, ""
}

// readRepoFile reads a regular file of the repository through root (no
// link out of it followed), at most max bytes.
func readRepoFile(root *os.Root, name string, max int) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("unreadable: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil || len(b) > max {
		return nil, fmt.Errorf("unreadable or over %d KiB", max>>10)
	}
	return b, nil
}

// splitFrontMatter cuts a Markdown file's leading --- block from its body.
func splitFrontMatter(b []byte) (front, body []byte, ok bool) {
	b = bytes.ReplaceAll(bytes.TrimPrefix(b, []byte("\ufeff")), []byte("\r\n"), []byte("\n"))
	rest, found := bytes.CutPrefix(b, []byte("---\n"))
	if !found {
		return nil, nil, false
	}
	if i := bytes.Index(rest, []byte("\n---")); i >= 0 {
		body = rest[i+len("\n---"):]
		if j := bytes.IndexByte(body, '\n'); j >= 0 {
			return rest[:i], body[j+1:], true
		}
		return rest[:i], nil, true
	}
	return nil, nil, false
}

// toolList reads a tools key written as "A, B" or as a list.
func toolList(v any) []string {
	var out []string
	switch t := v.(type) {
	case string:
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for _, s := range t {
			if str, ok := s.(string); ok && strings.TrimSpace(str) != "" {
				out = append(out, strings.TrimSpace(str))
			}
		}
	}
	return out
}
