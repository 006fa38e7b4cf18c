package approvals

import "testing"

// everydayGrants are the commands a team approves with "Allow for thread",
// what that stores, and whether the next natural variant then runs
// without asking: the table in docs/SECURITY.md ("Rules derived from an
// approval"), measured before and after issue 24.
var everydayGrants = []struct {
	cmd, stored, variant string
	allowed              bool
}{
	{"npm test", "npm test:*", "npm test -- --watch=false", true},
	{"npm run build", "npm run build:*", "npm run build -- --watch", true},
	{"go test ./...", "go test:*", "go test ./pkg/...", true},
	{"go build ./...", "go build:*", "go build ./cmd/...", true},
	{"go vet ./...", "go vet:*", "go vet ./pkg/...", true},
	{"make", "make", "make -j4", false},
	{"make test", "make test:*", "make test -j4", true},
	{"git status", "git status:*", "git status -s", true},
	{"git diff", "git diff:*", "git diff --stat", true},
	{"git log", "git log:*", "git log --oneline -5", true},
	{"git show", "git show:*", "git show HEAD~1", true},
	{"ls", "ls:*", "ls -la src", true},
	{"cat go.mod", "cat:*", "cat README.md", true},
	{"head -20 main.go", "head:*", "head -n 5 go.sum", true},
	{"grep -rn TODO .", "grep:*", "grep -rn FIXME src", true},
	{"rg TODO", "rg:*", "rg -n FIXME src", true},
	{"wc -l main.go", "wc:*", "wc -l *.go", true},
	{"pytest", "pytest:*", "pytest -x tests/test_api.py", true},
	{"cargo test", "cargo test:*", "cargo test -- --nocapture", true},

	// Narrower than before issue 24.
	{"make test", "make test:*", "make test V=1", false},
	{"pytest", "pytest:*", "pytest --cov=src", false},
	{"go test ./...", "go test:*", "go test -coverprofile=c.out ./...", false},
	{"git log", "git log:*", "git log $BRANCH", false},
	{"sort -n f", "sort:*", "sort -n *.txt", false},
	{"touch a.txt", "touch a.txt", "touch b.txt", false},
	{"mkdir -p build", "mkdir -p build", "mkdir -p dist", false},
	{"rm a.txt", "rm a.txt", "rm b.txt", false},
	{"cp a b", "cp a b", "cp a c", false},
	{"git add .", "git add .", "git add src", false},
	{"git commit -m wip", "git commit -m wip", "git commit -m fix", false},
	{"git branch", "git branch", "git branch -a", false},
	{"go mod tidy", "go mod tidy", "go mod tidy -v", false},
	{"kubectl get pods", "kubectl get pods", "kubectl get svc", false},
	{"curl -s https://example.com", "curl -s https://example.com", "curl -s https://example.org", false},
	{"man ls", "man ls", "man git", false},
	{"echo $PATH", "", "echo $HOME", false},
}

func TestEverydayGrants(t *testing.T) {
	for _, g := range everydayGrants {
		c := Call{ChannelKey: "C", ThreadKey: "T", Tool: "Bash", Input: bashInput(g.cmd), Cwd: "/w", Home: "/home/u"}
		r, ok := GrantRule(c, ChoiceAllowThread)
		if r.Pattern != g.stored || ok != (g.stored != "") {
			t.Errorf("%q stores %q (%v), want %q", g.cmd, r.Pattern, ok, g.stored)
			continue
		}
		if !ok {
			continue
		}
		c.Input = bashInput(g.variant)
		if eff, _ := EvaluateCall([]Rule{r}, c); (eff == EffectAllow) != g.allowed {
			t.Errorf("%s on %q: allowed %v, want %v", r.Spec(), g.variant, eff == EffectAllow, g.allowed)
		}
	}
}
