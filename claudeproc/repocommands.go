package claudeproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A repository's custom slash commands (.claude/commands/**/*.md) reach a
// guarded session through the bot: --restricted loads none of them, and a
// --plugin-dir built of them names each "<plugin>:<name>", in what the
// model is sent too. A skill (.claude/skills/<name>/SKILL.md) a person
// types as /<name> is such a command too (the model calls the same skill
// as repo:<name>, reposkills.go). So the bot reads the command's
// file itself and sends
// the user message the CLI would make of it on a laptop: a block naming
// the command and its arguments, then the file's body with its front
// matter stripped and the arguments put in. The CLI then treats the body
// as any message (an @file in it is read by the CLI, within the working
// directory). What the file could make run or decide, its allowed-tools
// and its !`command` lines, never takes effect: the bot reads no key but
// the body, and a !`command` stays text (measured on 2.1.330 and 2.1.309,
// repocommands_realcli_test.go).

const (
	commandsDir = ".claude/commands"
	skillsDir   = ".claude/skills"
	// maxCommandFile bounds what one command puts in a message.
	maxCommandFile = 32 << 10
)

// ErrNoCommand: the repository has no command of that name.
var ErrNoCommand = errors.New("no such command in the repository")

// commandName is one part of a command's name: "team:deep" is
// .claude/commands/team/deep.md.
var commandName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// RepoCommand reads the custom slash command name of the repository at
// dir (.claude/commands/<name>.md, else the skill
// .claude/skills/<name>/SKILL.md, which a person may type too) and returns the content blocks of the user message "/name args"
// becomes, as the CLI makes it. The file is read through os.Root (a
// symlink out of dir is not followed) and bounded in size. err wraps
// ErrNoCommand when the repository has none of that name.
func RepoCommand(dir, name, args string) ([]ContentBlock, error) {
	parts := strings.Split(name, ":")
	for _, p := range parts {
		if !commandName.MatchString(p) {
			return nil, fmt.Errorf("%q: %w", name, ErrNoCommand)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open working directory for its commands: %w", err)
	}
	defer root.Close()
	body, err := readCommand(root, commandsDir+"/"+strings.Join(parts, "/")+".md")
	if errors.Is(err, ErrNoCommand) && len(parts) == 1 {
		// A skill is a command too when a person types it; the CLI tells
		// the model where its files are.
		body, err = readCommand(root, skillsDir+"/"+name+"/SKILL.md")
		body = "Base directory for this skill: " + filepath.Join(dir, skillsDir, name) + "\n\n" + body
	}
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", name, err)
	}
	head := "<command-message>" + name + "</command-message>\n<command-name>/" + name + "</command-name>\n"
	if args != "" {
		head += "<command-args>" + args + "</command-args>\n"
	}
	return []ContentBlock{TextBlock(head), TextBlock(expandArgs(body, args))}, nil
}

// readCommand reads a command file's body, its front matter left out.
func readCommand(root *os.Root, name string) (string, error) {
	b, err := readRepoFile(root, name, maxCommandFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoCommand
	}
	if err != nil {
		return "", err
	}
	if _, body, ok := splitFrontMatter(b); ok {
		return string(body), nil
	}
	return string(b), nil
}

// argRef is a placeholder the CLI fills: $ARGUMENTS[n], $ARGUMENTS, $n
// (not followed by a letter, digit or _); a backslash before the $ keeps
// it as text.
var argRef = regexp.MustCompile(`\\?\$(?:ARGUMENTS\[(\d+)\]|ARGUMENTS|(\d+))`)

// expandArgs puts args into body as the CLI does: $ARGUMENTS is all of
// them, $n and $ARGUMENTS[n] the n-th word from 0 (quotes group words;
// past the last one, the placeholder stays), \$ is a literal $; a body in
// which nothing was filled gets "ARGUMENTS: args" appended.
func expandArgs(body, args string) string {
	words := splitArgs(args)
	var b strings.Builder
	used, last := false, 0
	for _, m := range argRef.FindAllStringSubmatchIndex(body, -1) {
		ref := body[m[0]:m[1]]
		b.WriteString(body[last:m[0]])
		last = m[1]
		switch {
		case strings.HasPrefix(ref, `\`):
			b.WriteString(ref[1:])
		case m[4] >= 0 && m[1] < len(body) && isWordByte(body[m[1]]):
			b.WriteString(ref) // $1abc is no placeholder
		case m[2] < 0 && m[4] < 0:
			used = true
			b.WriteString(args)
		default:
			g := 2 // $ARGUMENTS[n]
			if m[4] >= 0 {
				g = 4 // $n
			}
			num := body[m[g]:m[g+1]]
			i, err := strconv.Atoi(num)
			if err != nil || i >= len(words) {
				b.WriteString(ref) // past the last word: left as it is
				continue
			}
			used = true
			b.WriteString(words[i])
		}
	}
	b.WriteString(body[last:])
	out := b.String()
	if !used && args != "" {
		out += "\n\nARGUMENTS: " + args
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// splitArgs splits args into words as a shell would quote them: '…' and
// "…" group, a backslash escapes the next character.
func splitArgs(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
