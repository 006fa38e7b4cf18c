package approvals

import "strings"

// Deriving a rule from an approved command.

// broadCommands run other commands or arbitrary code given as arguments, so a
// "cmd:*" rule derived from one approval would allow anything. deriveBash
// keeps the exact command for them. Names starting with "python" count too.
var broadCommands = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "csh": true, "tcsh": true,
	"env": true, "sudo": true, "doas": true, "su": true, "runuser": true, "pkexec": true, "xargs": true,
	"parallel": true, "nohup": true, "nice": true, "ionice": true, "timeout": true, "watch": true,
	"strace": true, "ltrace": true, "gdb": true, "setsid": true, "stdbuf": true, "taskset": true,
	"flock": true, "chroot": true, "unshare": true, "nsenter": true, "script": true, "expect": true,
	"ssh": true, "busybox": true, "find": true, "awk": true, "gawk": true, "mawk": true, "nawk": true,
	"sed": true, "make": true, "gmake": true, "cmake": true, "tar": true, "rsync": true, "zip": true,
	"vi": true, "vim": true, "nvim": true, "emacs": true, "ed": true, "ex": true,
	"npx": true, "pnpx": true, "bunx": true, "uvx": true, "pipx": true,
	"node": true, "nodejs": true, "deno": true, "bun": true, "ts-node": true, "tsx": true,
	"pypy": true, "pypy3": true, "perl": true, "ruby": true, "php": true, "lua": true, "tclsh": true,
	"Rscript": true, "julia": true, "java": true, "osascript": true, "pwsh": true, "powershell": true,
	"docker": true, "podman": true,
}

// subcommandTools do what their first argument says, so a rule derived from
// one approval names it too: "git status:*", not "git:*". The listed
// subcommands run commands or code given as arguments or configuration
// (git fetch --upload-pack=…, npm exec, go run …): the exact command is
// kept for them.
var subcommandTools = map[string]map[string]bool{
	"git": set("config", "submodule", "filter-branch", "bisect", "rebase", "difftool", "mergetool",
		"daemon", "instaweb", "send-email", "archive", "fetch", "pull", "push", "clone", "ls-remote", "grep"),
	"npm":   set("exec", "x", "explore", "run", "run-script", "install", "i", "add", "ci", "rebuild", "config", "set"),
	"pnpm":  set("exec", "x", "dlx", "run", "install", "i", "add", "rebuild", "config", "set"),
	"yarn":  set("exec", "dlx", "run", "install", "add", "rebuild", "config", "set"),
	"go":    set("run", "generate", "tool", "env", "get", "install"),
	"cargo": set("run", "install", "script"),
	"kubectl": set("exec", "run", "debug", "attach", "cp", "apply", "create", "delete", "replace", "patch",
		"edit", "proxy", "port-forward", "plugin"),
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// deriveBash returns the pattern an approval of cmd stores: "word:*" for a
// single simple command inside the allow grammar whose first word is a
// commandName that does not run other commands (broadCommands), "tool sub:*"
// for subcommandTools; else the exact trimmed command, or "" when that ends
// in ":*" and so would read as a prefix rule. It always matches cmd.
func deriveBash(cmd string) string {
	cmd = trimCommand(cmd)
	if cmd == "" {
		return ""
	}
	exact := cmd
	if strings.HasSuffix(cmd, ":*") {
		exact = "" // it would read as a prefix rule: nothing expresses it exactly
	}
	cmds, err := parseAllow(cmd)
	if err != nil || len(cmds) != 1 || len(cmds[0].words) == 0 {
		return exact
	}
	words := cmds[0].words
	first := words[0].text
	// The base name counts too: /usr/bin/env, ./bash.
	base := first[strings.LastIndexByte(first, '/')+1:]
	if !words[0].literal || !commandName(first) || broadCommands[base] || strings.HasPrefix(base, "python") {
		return exact
	}
	subs, ok := subcommandTools[base]
	if !ok {
		return first + ":*"
	}
	if len(words) < 2 || !words[1].literal || !subcommandName(words[1].text) || subs[words[1].text] {
		return exact
	}
	return first + " " + words[1].text + ":*"
}

// subcommandName: a plain subcommand such as "status" or "ls-files", not an
// option.
func subcommandName(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !isAlpha(c) && !isDigit(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}
