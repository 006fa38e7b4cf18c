package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
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

// loadAgents reads a guarded session's agents from its working directory.
func (o *Options) loadAgents(log *slog.Logger) {
	if o.Guard == nil || o.Dir == "" {
		return
	}
	agents, skipped, err := RepoAgents(o.Dir)
	if err != nil || len(skipped) > 0 {
		log.Warn("repository agents left out", "dir", o.Dir, "skipped", skipped, "err", err)
	}
	o.agents = agents
}

// RepoAgents reads the agent files of the repository at dir (under
// .claude/agents, its subdirectories included) and returns
// them as --agents JSON, "" when there are none; err only when dir
// cannot be opened. Files are read through
// os.Root: a symlink leading out of dir is not followed. A file that is
// not an agent (no name or description, bad front matter, too big) is
// skipped, as the CLI skips it; skipped names the files left out and why.
func RepoAgents(dir string) (agents string, skipped []string, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", nil, fmt.Errorf("open working directory for its agents: %w", err)
	}
	defer root.Close()
	all := map[string]repoAgent{}
	seen := 0
	// Subdirectories too, as the CLI reads them; WalkDir enters no
	// symlinked directory.
	err = fs.WalkDir(root.FS(), agentsDir, func(name string, d fs.DirEntry, err error) error {
		seen++
		switch {
		case errors.Is(err, fs.ErrNotExist) && name == agentsDir:
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
			skipped = append(skipped, strings.TrimPrefix(name, agentsDir+"/")+": "+why)
			return nil
		}
		all[id] = a
		return nil
	})
	if err != nil {
		return "", skipped, fmt.Errorf("walk %s: %w", agentsDir, err)
	}
	if len(all) == 0 {
		return "", skipped, nil
	}
	b, err := json.Marshal(all)
	if err != nil {
		return "", skipped, fmt.Errorf("encode agents: %w", err)
	}
	if len(b) > maxAgentsJSON {
		return "", append(skipped, fmt.Sprintf("all: %d bytes, over %d", len(b), maxAgentsJSON)), nil
	}
	sort.Strings(skipped)
	return string(b), skipped, nil
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
