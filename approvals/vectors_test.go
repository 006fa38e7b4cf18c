package approvals

import (
	"slices"
	"testing"
)

// hostileVector is one way a program runs another program, or writes a
// file, through its arguments, its environment or a file it reads (issue
// 24): a person approves the harmless command with "Allow for thread",
// and the rule that stores must not allow the hostile one.
type hostileVector struct {
	name     string
	harmless string // what a person approves
	hostile  string // what the model runs next
	// The oracle (vectors_oracle_test.go) runs hostile under real Bash in
	// a fresh directory holding a.txt, b.txt and evil.sh (which creates
	// pwned), after setup, and wants the file want created or changed.
	want     string
	setup    string
	needs    []string // programs the oracle needs besides the first word
	noOracle string   // why the oracle cannot show it here ("": it runs)
}

const (
	noTTY   = "needs a terminal: with output to a pipe it copies its input and reads no command"
	noRoot  = "needs privileges the oracle's user does not have"
	gitRepo = "git init -q && git add a.txt && git -c user.name=a -c user.email=a@b commit -qm x"
)

// hostileVectors come from the programs' manuals; each program of the
// issue has at least one.
var hostileVectors = []hostileVector{
	{name: "scp -o ProxyCommand", harmless: "scp a.txt b.txt", hostile: "scp -o ProxyCommand=./evil.sh -o BatchMode=yes a.txt h:b", want: "pwned"},
	{name: "ssh -o ProxyCommand", harmless: "ssh -V", hostile: "ssh -o ProxyCommand=./evil.sh -o BatchMode=yes h true", want: "pwned"},
	{name: "rsync -e", harmless: "rsync -a a.txt b.txt", hostile: "rsync -e ./evil.sh a.txt h:b", want: "pwned"},
	{name: "git -c alias", harmless: "git status", hostile: "git -c alias.x='!touch pwned' x", want: "pwned"},
	{name: "git -c pager", harmless: "git log", hostile: "git -c core.pager='touch pwned' log", noOracle: noTTY},
	{name: "git alias in config", harmless: "git status", hostile: "git x", want: "pwned",
		setup: `printf '[alias]\n\tx = !touch pwned\n' > "$HOME/.gitconfig"`},
	{name: "GIT_CONFIG env", harmless: "git status",
		hostile: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!touch pwned' git x", want: "pwned"},
	{name: "git diff --output", harmless: "git diff", hostile: "git diff --no-index --output=pwned a.txt b.txt", want: "pwned"},
	{name: "git diff --output glob", harmless: "git diff", hostile: "git diff --no-index [-ab]*", want: "pwned",
		setup: "touch -- --output=pwned"},
	{name: "git log --output", harmless: "git log", hostile: "git log --output=pwned", want: "pwned", setup: gitRepo},
	{name: "git show --output", harmless: "git show", hostile: "git show --output=pwned", want: "pwned", setup: gitRepo},
	{name: "git grep -O", harmless: "git grep x", hostile: "git grep --open-files-in-pager=./evil.sh x", want: "pwned", setup: gitRepo},
	{name: "git grep -O glued", harmless: "git grep x", hostile: "git grep -O./evil.sh x", want: "pwned", setup: gitRepo},
	{name: "kubectl exec credential", harmless: "kubectl get pods", hostile: "kubectl --kubeconfig=k.yaml get pods", want: "pwned",
		setup: kubeconfigSetup},
	{name: "kubectl plugin", harmless: "kubectl get pods", hostile: "PATH=.:$PATH kubectl pwn", want: "pwned",
		setup: "cp evil.sh kubectl-pwn"},
	{name: "find -exec", harmless: "find . -name '*.go'", hostile: "find . -maxdepth 0 -exec touch pwned ';'", want: "pwned"},
	{name: "xargs", harmless: "xargs echo", hostile: "xargs touch pwned", want: "pwned"},
	{name: "env", harmless: "env", hostile: "env touch pwned", want: "pwned"},
	{name: "sudo", harmless: "sudo -l", hostile: "sudo touch pwned", noOracle: noRoot},
	{name: "vim -c", harmless: "vim --version", hostile: "vim -Nu NONE -es -c '!touch pwned' -c 'qa!'", want: "pwned"},
	{name: "vi -c", harmless: "vi --version", hostile: "vi -Nu NONE -es -c '!touch pwned' -c 'qa!'", want: "pwned"},
	{name: "nano speller", harmless: "nano --version", hostile: "nano -s ./evil.sh a.txt", noOracle: noTTY},
	{name: "emacs --eval", harmless: "emacs --version", hostile: `emacs --batch --eval '(shell-command "touch pwned")'`, want: "pwned"},
	{name: "ed !file", harmless: "ed -s a.txt", hostile: "ed -s '!touch pwned'", want: "pwned"},
	{name: "less LESSOPEN", harmless: "less a.txt", hostile: "LESSOPEN='|touch pwned; cat %s' less a.txt", want: "pwned"},
	{name: "less -o", harmless: "less a.txt", hostile: "less -o pwned a.txt", noOracle: noTTY},
	{name: "more !cmd", harmless: "more a.txt", hostile: "more b.txt", noOracle: noTTY + " (its !command)"},
	{name: "man -P", harmless: "man ls", hostile: "man -P ./evil.sh ls", noOracle: noTTY},
	{name: "python3 -c", harmless: "python3 --version", hostile: `python3 -c 'open("pwned","w")'`, want: "pwned"},
	{name: "node -e", harmless: "node --version", hostile: `node -e 'require("fs").writeFileSync("pwned","")'`, want: "pwned"},
	{name: "perl -e", harmless: "perl -v", hostile: `perl -e 'open(F,">pwned")'`, want: "pwned"},
	{name: "npm --script-shell", harmless: "npm test", hostile: "npm test --script-shell=./evil.sh", want: "pwned",
		setup: `echo '{"scripts":{"test":"true"}}' > package.json`, needs: []string{"node"}},
	{name: "npm exec", harmless: "npm test", hostile: "npm exec -c ./evil.sh", want: "pwned",
		setup: `echo '{"scripts":{"test":"true"}}' > package.json`, needs: []string{"node"}},
	{name: "pnpm --script-shell", harmless: "pnpm test", hostile: "pnpm test --script-shell=./evil.sh", want: "pwned",
		setup: `echo '{"scripts":{"test":"true"}}' > package.json`},
	{name: "yarn exec", harmless: "yarn test", hostile: "yarn exec ./evil.sh", want: "pwned"},
	{name: "pip --log", harmless: "pip --version", hostile: "pip --log pwned list", want: "pwned"},
	{name: "cargo --config runner", harmless: "cargo test", hostile: `cargo test --config 'target.x86_64-unknown-linux-gnu.runner="./evil.sh"'`, want: "pwned",
		setup: cargoSetup},
	{name: "cargo test --logfile", harmless: "cargo test", hostile: "cargo test -- --logfile=pwned", want: "pwned", setup: cargoSetup},
	{name: "go test -toolexec", harmless: "go test ./...", hostile: "go test -toolexec=./evil.sh .", want: "pwned", setup: goSetup},
	{name: "go test -exec", harmless: "go test ./...", hostile: "go test -exec ./evil.sh .", want: "pwned", setup: goSetup},
	{name: "go test -test.coverprofile", harmless: "go test ./...", hostile: "go test . -args -test.coverprofile=pwned", noOracle: "builds a test binary: slow, and -coverprofile is the same flag"},
	{name: "go vet -vettool", harmless: "go vet ./...", hostile: "go vet -vettool=./evil.sh .", want: "pwned", setup: goSetup},
	{name: "go build -o", harmless: "go build ./...", hostile: "go build -o pwned .", want: "pwned", setup: goSetup},
	{name: "go build -ldflags", harmless: "go build ./...", hostile: "go build -ldflags=-linkmode=external -ldflags=-extld=./evil.sh .", noOracle: "needs cgo's external linker"},
	{name: "make SHELL", harmless: "make test", hostile: "make test SHELL=./evil.sh", want: "pwned", setup: makeSetup},
	{name: "make -f", harmless: "make test", hostile: "make test -f evil.mk", want: "pwned",
		setup: makeSetup + ` && printf 'test:\n\ttouch pwned\n' > evil.mk`},
	{name: "make --eval", harmless: "make test", hostile: "make test --eval='test: pwn' --eval='pwn: ; touch pwned'", want: "pwned", setup: makeSetup},
	{name: "make second target", harmless: "make test", hostile: "make test deploy", want: "pwned",
		setup: `printf 'test:\n\ttrue\ndeploy:\n\ttouch pwned\n' > Makefile`},
	{name: "tar --checkpoint-action", harmless: "tar -tf a.tar", hostile: "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec=./evil.sh a.txt", want: "pwned"},
	{name: "tar --to-command", harmless: "tar -tf a.tar", hostile: "tar -xf a.tar --to-command=./evil.sh", want: "pwned", setup: "tar -cf a.tar a.txt"},
	{name: "tar -I", harmless: "tar -tf a.tar", hostile: "tar -I ./evil.sh -cf x.tar a.txt", want: "pwned"},
	{name: "zip -TT", harmless: "zip -T a.zip", hostile: "zip x.zip a.txt -T -TT ./evil.sh", want: "pwned"},
	{name: "unzip writes", harmless: "unzip -l a.zip", hostile: "unzip -o a.zip", want: "pwned",
		setup: "mkdir s && echo x > s/pwned && (cd s && zip -q ../a.zip pwned) && rm -r s"},
	{name: "sort -o", harmless: "sort a.txt", hostile: "sort -o pwned a.txt", want: "pwned"},
	{name: "sort -o bundled", harmless: "sort a.txt", hostile: "sort -uopwned a.txt", want: "pwned"},
	{name: "sort --out abbreviated", harmless: "sort a.txt", hostile: "sort --out=pwned a.txt", want: "pwned"},
	{name: "sort glob to -o", harmless: "sort a.txt", hostile: "sort *.txt", want: "pwned.txt", setup: "touch -- -opwned.txt"},
	{name: "sort --compress-program", harmless: "sort a.txt", hostile: "sort -S 1k --compress-program=./evil.sh big.txt", want: "pwned",
		setup: "seq 1 200000 > big.txt"},
	{name: "rg --pre", harmless: "rg x", hostile: "rg --pre ./evil.sh x a.txt", want: "pwned"},
	{name: "rg --hostname-bin", harmless: "rg x", hostile: "rg --hostname-bin=./evil.sh --hyperlink-format=default x a.txt", noOracle: "ripgrep 14's option; 13 is installed here"},
	{name: "curl -o", harmless: "curl -s https://example.com", hostile: "curl -s -o pwned file:///etc/hostname", want: "pwned"},
	{name: "curl -K", harmless: "curl -s https://example.com", hostile: "curl -s -K cfg", want: "pwned",
		setup: `printf 'url = "file:///etc/hostname"\noutput = "pwned"\n' > cfg`},
	{name: "wget -o", harmless: "wget -q https://example.com", hostile: "wget -t 1 -o pwned http://127.0.0.1:9/", want: "pwned"},
	{name: "cp", harmless: "cp a.txt b.txt", hostile: "cp a.txt pwned", want: "pwned"},
	{name: "mv", harmless: "mv a.txt b.txt", hostile: "mv a.txt pwned", want: "pwned"},
	{name: "ln", harmless: "ln -s a.txt c", hostile: "ln -s a.txt pwned", want: "pwned"},
	{name: "install", harmless: "install -m 644 a.txt c", hostile: "install a.txt pwned", want: "pwned"},
	{name: "tee", harmless: "tee /dev/null", hostile: "tee pwned", want: "pwned"},
	{name: "dd", harmless: "dd if=a.txt of=/dev/null", hostile: "dd if=a.txt of=pwned", want: "pwned"},
	{name: "sed -i", harmless: "sed -n 1p a.txt", hostile: "sed -i s/x/y/ a.txt", want: "a.txt"},
	{name: "sed w", harmless: "sed -n 1p a.txt", hostile: "sed -n 'w pwned' a.txt", want: "pwned"},
	{name: "sed e", harmless: "sed -n 1p a.txt", hostile: "sed '1e touch pwned' a.txt", want: "pwned"},
	{name: "awk system", harmless: "awk '{print $1}' a.txt", hostile: `awk 'BEGIN{system("touch pwned")}'`, want: "pwned"},
	{name: "awk print >", harmless: "awk '{print $1}' a.txt", hostile: `awk '{print > "pwned"}' a.txt`, want: "pwned"},
	{name: "pytest -p", harmless: "pytest", hostile: "pytest -p evil", want: "pwned",
		setup: `echo 'open("pwned","w")' > evil.py`, needs: []string{"python3"}},
	{name: "pytest --junitxml", harmless: "pytest", hostile: "pytest --junitxml=pwned", want: "pwned"},
	{name: "file -C", harmless: "file a.txt", hostile: "file -C -m m", want: "m.mgc", setup: "echo '0 string x X' > m"},
	{name: "date -s", harmless: "date", hostile: "date -s 2000-01-01", noOracle: noRoot},
}

const (
	kubeconfigSetup = `cat > k.yaml <<'EOF'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./evil.sh, interactiveMode: Never}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
EOF`
	goSetup    = `printf 'module m\n\ngo 1.21\n' > go.mod && printf 'package main\n\nfunc main() {}\n' > main.go && printf 'package main\n\nimport "testing"\n\nfunc TestX(t *testing.T) {}\n' > main_test.go`
	makeSetup  = `printf 'test:\n\ttrue\n' > Makefile`
	cargoSetup = `printf '[package]\nname = "x"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml && mkdir src && echo 'fn main() {}' > src/main.rs`
)

// TestDerivedRuleRefusesHostile: the rule "Allow for thread" and "Always
// allow" store for each harmless command allows that command and not its
// hostile variant.
func TestDerivedRuleRefusesHostile(t *testing.T) {
	for _, v := range hostileVectors {
		for _, ch := range []Choice{ChoiceAllowThread, ChoiceAllowAlways} {
			c := Call{ChannelKey: "C", ThreadKey: "T", Tool: "Bash", Input: bashInput(v.harmless), Cwd: "/w"}
			r, ok := GrantRule(c, ch)
			if !ok {
				t.Errorf("%s: no grant for %q", v.name, v.harmless)
				continue
			}
			if eff, _ := EvaluateCall([]Rule{r}, c); eff != EffectAllow {
				t.Errorf("%s: %s does not allow %q", v.name, r.Spec(), v.harmless)
			}
			c.Input = bashInput(v.hostile)
			if eff, _ := EvaluateCall([]Rule{r}, c); eff == EffectAllow {
				t.Errorf("%s: %s (from %q) allows %q", v.name, r.Spec(), v.harmless, v.hostile)
			}
		}
	}
}

// TestHostileVectorsCoverIssue: every program the issue names has a vector.
func TestHostileVectorsCoverIssue(t *testing.T) {
	progs := map[string]bool{}
	for _, v := range hostileVectors {
		progs[firstWord(v.hostile)] = true
		progs[firstWord(v.harmless)] = true
	}
	for _, p := range []string{
		"scp", "ssh", "rsync", "git", "kubectl", "find", "xargs", "env", "sudo", "vi", "vim", "nano",
		"emacs", "ed", "less", "more", "man", "python3", "node", "perl", "npm", "pnpm", "yarn", "pip",
		"cargo", "go", "make", "tar", "zip", "unzip", "sort", "rg", "curl", "wget", "cp", "mv", "ln",
		"install", "tee", "dd", "sed", "awk",
	} {
		if !progs[p] {
			t.Errorf("no hostile vector for %s", p)
		}
	}
}

// firstWord is the program a vector's command runs, past assignments.
func firstWord(cmd string) string {
	words := looseWords(cmd)
	i := slices.IndexFunc(words, func(w string) bool { return !isAssignment(w) })
	if i < 0 {
		return ""
	}
	return words[i]
}
